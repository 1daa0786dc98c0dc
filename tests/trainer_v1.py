"""A run whose checkpoint was written in the trainer's first format (`fewshot_nb.training.trainer/1`: the callbacks'
states as flat keys `scheduler`, `window`, `best`, `early_stopping`; the configuration with `schedule`, `lr_step`,
`lr_gamma`, `val_every`, `val_tasks` in every run). `tests/data/trainer_v1_step.pt` and `trainer_v1_plateau.pt` were
written by `python tests/trainer_v1.py --write` at commit faf9dfe (the last commit of that format): each run stopped at
step 5 of 12. `tests/test_trainer_v1.py` resumes them with today's trainer."""
from __future__ import annotations
import shutil, sys
from pathlib import Path
import torch

from fewshot_nb.core import seal
from fewshot_nb.data.streams import ImageSource, EpisodeStream
from fewshot_nb.data.samplers import EpisodeSampler, TaskManifest
from fewshot_nb.training.backbones import Conv4
from fewshot_nb.training.trainer import ProtoNetTraining
import fewshot_nb.training.trainer as T

DATA = Path(__file__).parent/"data"
RUNS = {"step": DATA/"trainer_v1_step.pt", "plateau": DATA/"trainer_v1_plateau.pt"}
STOPPED_AT = 5


def _data(seed, n_classes, per_class):
    g = torch.Generator().manual_seed(seed)
    return ImageSource(torch.rand(n_classes * per_class, 1, 28, 28, generator=g), torch.arange(n_classes * per_class) % n_classes)


def make(kind:str, ck=None, **changed):
    """The trainer of run `kind`: ProtoNet with SGD, a 'step' (every 3 steps) or 'plateau' (windows of 2 steps, patience 0)
    schedule, validation every 2 steps and early stopping after 3 validations without improvement; a `Checkpoint` at `ck`.
    `changed`: settings that make another run (`lr`, `seed`)."""
    torch.manual_seed(0)
    v = _data(1, 5, 6)
    tasks = TaskManifest.sample(EpisodeSampler(v.labels.numpy(), 5, 1, 3), 6, seed=0)
    sched = T.LRSchedule("step", step=3, gamma=0.5) if kind == "step" else T.LRSchedule("plateau", step=2, gamma=0.5, patience=0)
    cbs = [sched, T.Validate(v, tasks, every=2), T.EarlyStopping(patience=3)] + ([T.Checkpoint(ck)] if ck else [])
    kw = dict(lr=5e-2, seed=1) | changed
    return T.Trainer(ProtoNetTraining(Conv4(width=4)), EpisodeStream(_data(0, 6, 8), 5, 1, 2, n_tasks=2), 12,
                     optimizer="sgd", device="cpu", progress=False, callbacks=cbs, **kw)


def as_format_1(path):
    """Rewrite a checkpoint of today's format at `path` as the trainer of format 1 wrote it (the states flat, the default
    settings of an absent schedule or validation in the configuration), sealed as that trainer sealed it."""
    ck = torch.load(path, weights_only=True); states = ck.pop("callbacks"); ck.pop("sha256")
    sched = states.get("LRSchedule", dict(scheduler=None, window=None))
    config = dict(schedule=None, lr_step=None, lr_gamma=0.5, val_every=100, val_tasks=None) | ck["config"]
    torch.save(seal(ck | dict(format="fewshot_nb.training.trainer/1", config=config, scheduler=sched["scheduler"], window=sched["window"],
                              best=states.get("Validate"), early_stopping=states.get("EarlyStopping"))), path)


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]: sys.exit("usage: python tests/trainer_v1.py --write   (only with the trainer of format 1)")
    assert T._FORMAT == "fewshot_nb.training.trainer/1", T._FORMAT
    torch.set_num_threads(1)
    for kind, path in RUNS.items():
        path.unlink(missing_ok=True)
        make(kind, path).fit(until=STOPPED_AT)
        print(f"wrote {path} ({path.stat().st_size} bytes)")
