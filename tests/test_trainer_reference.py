"""The Trainer rebuilt with callbacks (issue 47) trains the weights the 25-argument trainer trained: four short runs
(Adam, SGD with weight decay and clipping, RMSprop, Adam's betas; step, plateau and cosine schedules; validation with
the best weights kept; an evaluation hook; a run stopped at step 6 and resumed from its checkpoint; channels-last)
against `tests/data/trainer_reference.pt`, written by the old trainer (see `tests/trainer_reference.py`)."""
import numpy as np
import pytest
import torch

import trainer_reference as R


@pytest.fixture(scope="module")
def reference():
    return torch.load(R.REFERENCE)


def _close(a, b):
    return a.shape == b.shape and torch.allclose(a.double(), b.double(), rtol=1e-5, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("name", R.RUNS)
def test_the_callback_trainer_trains_the_old_trainers_weights(name, reference):
    threads = torch.get_num_threads(); torch.set_num_threads(1)   # as the reference was written
    try: got = R.outcome(name)
    finally: torch.set_num_threads(threads)
    want = reference[name]
    assert got["config"] == want["config"], "the configuration a checkpoint records changed: older checkpoints would be refused"
    for part in ("final", "best"):
        assert list(got[part]) == list(want[part])
        bad = [k for k in want[part] if not _close(got[part][k], want[part][k])]
        assert not bad, f"{name}: {part} weights differ from the old trainer's in {bad}"
    for part in ("history", "evals"):
        assert sorted(got[part]) == sorted(want[part]), (part, sorted(got[part]), sorted(want[part]))
        bad = [k for k in want[part] if not _close(got[part][k], want[part][k])]
        assert not bad, f"{name}: {part} columns {bad} differ from the old trainer's"


def test_the_comparison_would_see_a_different_run(reference):
    "A run one step shorter is told apart: the test compares something that could differ."
    got = R.outcome("supervised_adam")["final"]
    t = R.make("supervised_adam"); t.fit(until=11)
    shorter = t.method.state_dict()
    assert all(_close(got[k], reference["supervised_adam"]["final"][k]) for k in got)
    assert not all(_close(shorter[k], reference["supervised_adam"]["final"][k]) for k in shorter)
