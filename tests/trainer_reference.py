"""Short training runs whose weights the Trainer must keep giving (issue 47: the Trainer rebuilt with callbacks trains
the same weights as the one it replaced; issue 53: and the comparison holds on every CPU).

Two references, each compared in `tests/test_trainer_reference.py` with a tolerance it can keep on any machine:

- `tests/data/trainer_reference.pt`: the runs in float32, written by `python tests/trainer_reference.py --write` at
  commit 96055d5 with the trainer of 25 keyword arguments (that commit's version of this file spells each run in both
  APIs). Float32 kernels differ between CPUs (AVX2, AVX-512, the default path) in the last bit, and adaptive optimisers
  turn the rounding noise of a gradient that is zero in exact arithmetic (a convolution's bias before batch norm) into
  steps of the full learning rate, so these runs are compared on what they mean (see the test).
- `tests/data/trainer_reference_f64.pt`: the same runs in float64 (`dtype=torch.float64`: the model in float64, the
  images cast on entry), written by `python tests/trainer_reference.py --write-f64` with the callback trainer, after it
  had been shown equal to the old one on the float32 runs on the machine that recorded them. In float64 a zero
  gradient's rounding noise (about 1e-17) is far below the optimisers' eps (1e-8), so nothing amplifies it: every
  weight is compared, at tolerances 30 to 100 times the spread measured across code paths (see the test).

Each run is a function from a temporary folder to the trainer after `fit`."""
from __future__ import annotations
import tempfile
from pathlib import Path
import torch

from fewshot_nb.data.streams import ImageSource, ClassStream, EpisodeStream
from fewshot_nb.data.samplers import EpisodeSampler, TaskManifest
from fewshot_nb.training.backbones import Conv4
from fewshot_nb.training.trainer import Supervised, ProtoNetTraining, MatchingNet
import fewshot_nb.training.trainer as T

REFERENCE = Path(__file__).parent/"data"/"trainer_reference.pt"


class Conv4F64(Conv4):
    "Conv4 that computes in its parameters' dtype: the streams hand out float32 images, cast here on entry."
    def forward(self, x): return super().forward(x.to(self.encoder[0][0].weight.dtype))


def data(seed=0, n_classes=6, per_class=8):
    g = torch.Generator().manual_seed(seed)
    return ImageSource(torch.rand(n_classes * per_class, 1, 28, 28, generator=g), torch.arange(n_classes * per_class) % n_classes)


def val():
    v = data(1, 5, 6)
    return v, TaskManifest.sample(EpisodeSampler(v.labels.numpy(), 5, 1, 3), 6, seed=0)


def _acc(trainer):
    "An evaluation hook: the validation accuracy as a fraction."
    from fewshot_nb.metrics import accuracy
    v, m = val()
    return dict(acc=float(accuracy(trainer.method.scores(v, m.batch), m.batch.query_labels, m.batch.query_mask).mean()))


def make(name, ck=None, dtype=torch.float32):
    "The trainer of run `name` (a checkpoint at `ck` for the run that resumes), its model in `dtype`."
    torch.manual_seed(0)
    v, m = val()
    t = _make(name, ck, v, m, Conv4F64 if dtype == torch.float64 else _Conv4, dtype)
    if dtype == torch.float64 and (ck is None or not Path(ck).exists()): _init_f64(t.method)   # (a resumed run has its weights)
    return t


def _init_f64(method, seed=0):
    """Initial weights drawn in float64 from integer random bits, so that they are the same bits on every CPU: torch's float32
    `uniform_` rounds differently on its AVX2 and default code paths (one ulp), which float64 training would then carry.
    Each weight uniform in +-1/sqrt(fan-in) (a tensor's first row's size; 0.1 for vectors), batch norm's 1s and 0s kept."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in method.named_parameters():
            if p.ndim == 1 and (bool((p == 1).all()) or bool((p == 0).all())): continue
            scale = p[0].numel() ** -0.5 if p.ndim > 1 else 0.1
            p.copy_((torch.rand(p.shape, generator=g, dtype=torch.float64) * 2 - 1) * scale)


_Conv4 = Conv4


def _make(name, ck, v, m, Conv4, dtype):
    if name == "supervised_adam":
        method, src = Supervised(Conv4(width=4), 6, head="cosine").to(dtype), ClassStream(data(), 12)
        return T.Trainer(method, src, 12, lr=1e-2, seed=3, device="cpu", progress=False)
    if name == "protonet_sgd_step_val_clip":
        method, src = ProtoNetTraining(Conv4(width=4)).to(dtype), EpisodeStream(data(), 5, 1, 2, n_tasks=2)
        return T.Trainer(method, src, 12, lr=5e-2, optimizer=T.Optimizer("sgd", weight_decay=1e-4, grad_clip=1.0), seed=1,
                         device="cpu", progress=False,
                         callbacks=[T.LRSchedule("step", step=4, gamma=0.5), T.Validate(v, m, every=4),
                                    *([T.Checkpoint(ck, every=5)] if ck else [])])
    if name == "matching_rmsprop_plateau":
        method, src = MatchingNet(Conv4(width=4)).to(dtype), EpisodeStream(data(), 4, 1, 2)
        return T.Trainer(method, src, 12, lr=1e-2, optimizer=T.Optimizer("rmsprop"), seed=2, device="cpu", progress=False,
                         callbacks=[T.LRSchedule("plateau", step=3, gamma=0.5, patience=0)])
    if name == "supervised_betas_cosine_eval_channels_last":
        method, src = Supervised(Conv4(width=4), 6).to(dtype), ClassStream(data(), 12)
        return T.Trainer(method, src, 10, lr=1e-2, optimizer=T.Optimizer("adam", betas=(0.0, 0.9)), seed=4, device="cpu",
                         progress=False, callbacks=[T.LRSchedule("cosine"), T.Evaluate(_acc, at=[3, 7, 10]), T.ChannelsLast()])
    raise KeyError(name)


RUNS = ["supervised_adam", "protonet_sgd_step_val_clip", "matching_rmsprop_plateau", "supervised_betas_cosine_eval_channels_last"]


def outcome(name, dtype=torch.float32):
    "What a run leaves: final and best weights, the history's loss, lr and validation columns, the evaluations' metrics."
    with tempfile.TemporaryDirectory() as d:
        ck = Path(d)/"run.pt" if name == "protonet_sgd_step_val_clip" else None
        t = make(name, ck, dtype)
        if ck is not None: t.fit(until=6); t = make(name, ck, dtype)   # stopped at step 6, resumed by a new trainer
        hist = t.fit()
        final = {k: v.clone() for k, v in t.method.state_dict().items()}
        best = {k: v.clone() for k, v in t.load_best().state_dict().items()}
        cols = [c for c in ("step", "loss", "lr", "val_acc") if c in hist]
        evals = t.eval_history()
        return dict(final=final, best=best, history={c: torch.tensor(hist[c].to_numpy(dtype=float)) for c in cols},
                    evals={c: torch.tensor(evals[c].to_numpy(dtype=float)) for c in evals if c not in ("train_s", "eval_s")},
                    config=t.config)


REFERENCE_F64 = REFERENCE.with_name("trainer_reference_f64.pt")

if __name__ == "__main__":
    import sys
    if sys.argv[1:] != ["--write-f64"]: sys.exit("usage: python tests/trainer_reference.py --write-f64   (the float32 reference "
                                                 "was written by the old trainer and is not rewritten)")
    torch.set_num_threads(1)
    torch.save({name: outcome(name, torch.float64) for name in RUNS}, REFERENCE_F64)
    print(f"wrote {REFERENCE_F64}")
