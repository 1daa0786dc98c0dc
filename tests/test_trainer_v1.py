"""Checkpoints of the trainer's first format (`fewshot_nb.training.trainer/1`, before each callback kept its state under
a key of its own) resume: `tests/data/trainer_v1_*.pt` were written by the trainer of that format (see
`tests/trainer_v1.py`), stopped at step 5 of 12; today's trainer resumes each to the weights, the history, the best
validation and the early stop they hold, and still refuses them for another run; a run stopped midway and rewritten in
that format resumes to the run trained without a break."""
import shutil
import pytest
import torch

import trainer_v1 as V
import fewshot_nb.training.trainer as T


def _equal_weights(a, b) -> bool:
    return list(a) == list(b) and all(torch.equal(a[k], b[k]) for k in a)


@pytest.fixture(autouse=True)
def one_thread():
    n = torch.get_num_threads(); torch.set_num_threads(1)   # as the checkpoints were written
    yield
    torch.set_num_threads(n)


def test_the_old_checkpoints_are_of_format_1():
    for path in V.RUNS.values():
        ck = torch.load(path, weights_only=True)
        assert ck["format"] == "fewshot_nb.training.trainer/1" and {"scheduler", "window", "best", "early_stopping"} <= set(ck)
        assert "callbacks" not in ck and ck["step"] == V.STOPPED_AT


@pytest.mark.parametrize("kind", list(V.RUNS))
def test_an_old_checkpoint_is_resumed_with_every_state_it_holds(kind, tmp_path):
    """Each file the trainer of format 1 wrote is resumed holding exactly what it stored (weights, optimiser, history, the
    schedule and its window, the best validation, early stopping's count), then trains on and is written back in today's
    format. Compared with the file, not with a run recomputed here: float32 kernels differ between CPUs (AVX2, AVX-512),
    so a recomputation matches the stored weights only on the machine that wrote them."""
    old = torch.load(V.RUNS[kind], weights_only=True)
    ck = tmp_path/"run.pt"; shutil.copy(V.RUNS[kind], ck)
    t = V.make(kind, ck)
    assert t.step == V.STOPPED_AT and t.history == old["history"]
    assert _equal_weights(t.method.state_dict(), old["model"])
    assert t.opt.state_dict()["param_groups"] == old["optimizer"]["param_groups"]
    sched = t.callback(T.LRSchedule)
    assert sched.sched.state_dict() == old["scheduler"] and sched.window == old["window"]
    assert t.best[:2] == (old["best"]["acc"], old["best"]["step"]) and _equal_weights(t.best[2], old["best"]["model"])
    stop = t.callback(T.EarlyStopping)
    assert (stop.best, stop.bad) == (old["early_stopping"]["best"], old["early_stopping"]["bad"])
    t.fit()
    assert t.step > V.STOPPED_AT
    written = torch.load(ck, weights_only=True)
    assert written["format"] == T._FORMAT and set(written["callbacks"]) == {"LRSchedule", "Validate", "EarlyStopping"}


@pytest.mark.parametrize("kind", list(V.RUNS))
def test_an_old_checkpoint_resumes_to_the_uninterrupted_run(kind, tmp_path):
    """A run stopped at step 5, its checkpoint rewritten as format 1 (`V.as_format_1`, the same keys and configuration as the
    files the old trainer wrote), resumes to the same run trained without a break, bit for bit: both are computed here,
    on this CPU, so no tolerance is needed."""
    whole = V.make(kind); whole.fit()
    ck = tmp_path/"run.pt"
    V.make(kind, ck).fit(until=V.STOPPED_AT)
    V.as_format_1(ck)
    written, real = torch.load(ck, weights_only=True), torch.load(V.RUNS[kind], weights_only=True)
    assert set(written) == set(real) and set(written["config"]) == set(real["config"])   # the layout of a real format-1 file
    rest = V.make(kind, ck)
    assert rest.step == V.STOPPED_AT
    rest.fit()
    assert (rest.step, rest.stopped) == (whole.step, whole.stopped) and whole.step < 12, "early stopping's count was not resumed"
    assert _equal_weights(rest.method.state_dict(), whole.method.state_dict())
    assert rest.best[:2] == whole.best[:2] and _equal_weights(rest.best[2], whole.best[2])
    assert rest.opt.param_groups[0]["lr"] == whole.opt.param_groups[0]["lr"]
    assert rest.callback(T.LRSchedule).window == whole.callback(T.LRSchedule).window
    # the history: the rows of the validations agree exactly (a resumed run's first row averages fewer steps, and adds
    # a row at the step it stopped at, as every resumed run does)
    cols = ["step", "lr", "val_acc"]
    h_whole = [{c: r[c] for c in cols} for r in whole.history]
    h_rest = [{c: r[c] for c in cols} for r in rest.history if r["step"] != V.STOPPED_AT]
    assert h_rest == h_whole


@pytest.mark.parametrize("kind", list(V.RUNS))
def test_the_old_reader_puts_each_state_under_its_callbacks_key(kind):
    old = torch.load(V.RUNS[kind], weights_only=True)
    new = T._from_format_1(old)
    assert new["format"] == T._FORMAT and not {"scheduler", "window", "best", "early_stopping"} & set(new)
    assert new["callbacks"]["LRSchedule"] == dict(scheduler=old["scheduler"], window=old["window"])
    assert new["callbacks"]["Validate"] is old["best"] and new["callbacks"]["EarlyStopping"] == old["early_stopping"]
    assert new["config"] == old["config"] == V.make(kind).config   # a schedule and a validation: nothing dropped


def test_an_old_checkpoint_of_another_run_is_refused(tmp_path):
    ck = tmp_path/"run.pt"; shutil.copy(V.RUNS["step"], ck)
    with pytest.raises(T.CheckpointError, match="lr: 0.05 in the checkpoint, 0.01 now"): V.make("step", ck, lr=0.01)
    with pytest.raises(T.CheckpointError, match="schedule: 'step' in the checkpoint, 'plateau' now"): V.make("plateau", ck)
    assert torch.load(ck, weights_only=True)["format"] == "fewshot_nb.training.trainer/1"   # left as it was


def test_the_defaults_of_absent_callbacks_are_dropped_only_when_they_are_the_defaults():
    base = dict(n_steps=12, lr=0.01)
    read = lambda **config: T._from_format_1(dict(format="fewshot_nb.training.trainer/1", config=base | config))["config"]
    assert read(schedule=None, lr_step=None, lr_gamma=0.5, val_every=100, val_tasks=None) == base
    assert read(schedule="cosine", lr_step=None, lr_gamma=0.5, val_every=100, val_tasks=None) == base | dict(schedule="cosine", lr_step=None, lr_gamma=0.5)
    assert read(schedule=None, lr_step=None, lr_gamma=0.5, val_every=100, val_tasks=50) == base | dict(val_every=100, val_tasks=50)
    assert read(schedule=None, lr_step=None, lr_gamma=0.1, val_every=100, val_tasks=None) == base | dict(schedule=None, lr_step=None, lr_gamma=0.1)
