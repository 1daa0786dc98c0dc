"""Short training runs whose weights the Trainer must keep giving (issue 47: the Trainer rebuilt with callbacks trains
the same weights as the one it replaced). `tests/data/trainer_reference.pt` was written by
`python tests/trainer_reference.py --write` at commit 96055d5, with the trainer of 25 keyword arguments (that commit's
version of this file spells each run in both APIs); `tests/test_trainer_reference.py` reruns each run with today's
trainer and compares. Each run is a function from a temporary folder to the trainer after `fit`."""
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


def make(name, ck=None):
    "The trainer of run `name` (a checkpoint at `ck` for the run that resumes)."
    torch.manual_seed(0)
    v, m = val()
    if name == "supervised_adam":
        method, src = Supervised(Conv4(width=4), 6, head="cosine"), ClassStream(data(), 12)
        return T.Trainer(method, src, 12, lr=1e-2, seed=3, device="cpu", progress=False)
    if name == "protonet_sgd_step_val_clip":
        method, src = ProtoNetTraining(Conv4(width=4)), EpisodeStream(data(), 5, 1, 2, n_tasks=2)
        return T.Trainer(method, src, 12, lr=5e-2, optimizer=T.Optimizer("sgd", weight_decay=1e-4, grad_clip=1.0), seed=1,
                         device="cpu", progress=False,
                         callbacks=[T.LRSchedule("step", step=4, gamma=0.5), T.Validate(v, m, every=4),
                                    *([T.Checkpoint(ck, every=5)] if ck else [])])
    if name == "matching_rmsprop_plateau":
        method, src = MatchingNet(Conv4(width=4)), EpisodeStream(data(), 4, 1, 2)
        return T.Trainer(method, src, 12, lr=1e-2, optimizer=T.Optimizer("rmsprop"), seed=2, device="cpu", progress=False,
                         callbacks=[T.LRSchedule("plateau", step=3, gamma=0.5, patience=0)])
    if name == "supervised_betas_cosine_eval_channels_last":
        method, src = Supervised(Conv4(width=4), 6), ClassStream(data(), 12)
        return T.Trainer(method, src, 10, lr=1e-2, optimizer=T.Optimizer("adam", betas=(0.0, 0.9)), seed=4, device="cpu",
                         progress=False, callbacks=[T.LRSchedule("cosine"), T.Evaluate(_acc, at=[3, 7, 10]), T.ChannelsLast()])
    raise KeyError(name)


RUNS = ["supervised_adam", "protonet_sgd_step_val_clip", "matching_rmsprop_plateau", "supervised_betas_cosine_eval_channels_last"]


def outcome(name):
    "What a run leaves: final and best weights, the history's loss, lr and validation columns, the evaluations' metrics."
    with tempfile.TemporaryDirectory() as d:
        ck = Path(d)/"run.pt" if name == "protonet_sgd_step_val_clip" else None
        t = make(name, ck)
        if ck is not None: t.fit(until=6); t = make(name, ck)   # stopped at step 6, resumed by a new trainer
        hist = t.fit()
        final = {k: v.clone() for k, v in t.method.state_dict().items()}
        best = {k: v.clone() for k, v in t.load_best().state_dict().items()}
        cols = [c for c in ("step", "loss", "lr", "val_acc") if c in hist]
        evals = t.eval_history()
        return dict(final=final, best=best, history={c: torch.tensor(hist[c].to_numpy(dtype=float)) for c in cols},
                    evals={c: torch.tensor(evals[c].to_numpy(dtype=float)) for c in evals if c not in ("train_s", "eval_s")},
                    config=t.config)
