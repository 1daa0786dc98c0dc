"""Stopping a command half-way: SIGINT to the process group (Ctrl-C in a terminal) or SIGTERM to the command alone (`kill`,
a batch system's time limit) ends `fewshot-nb evaluate` within seconds, with status 130 and no traceback, and leaves its
`--out` as it was before the run (the staging folder removed). `reproduce` and sweeps: tests/test_reproduce.py."""
import os, signal, subprocess, sys, time
from pathlib import Path
import numpy as np
import pytest

CLI = str(Path(sys.executable).parent/"fewshot-nb")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_evaluate_stops_cleanly(tmp_path, sig):
    rng = np.random.default_rng(0)
    feats = tmp_path/"feats.npz"   # 40 classes of 30 items: TIM on 20,000 tasks runs for minutes, so the signal lands mid-run
    np.savez(feats, features=rng.random((1200, 64), dtype=np.float32), labels=np.repeat(np.arange(40), 30))
    np.savez(tmp_path/"base.npz", features=rng.random((200, 64), dtype=np.float32), labels=np.repeat(np.arange(10), 20))
    out = tmp_path/"runs"/"mine"
    env = os.environ | {"OMP_NUM_THREADS": "1", "FEWSHOT_PROGRESS": "0"}
    run = subprocess.Popen([CLI, "evaluate", str(feats), "--methods", "simpleshot,tim", "--tasks", "20000", "--shots", "1,5", "--base", str(tmp_path/"base.npz"),
                            "--out", str(out)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    try:
        deadline = time.time() + 120
        while time.time() < deadline and not list(out.glob(".staging-*")):   # the run has begun writing
            assert run.poll() is None, run.communicate()
            time.sleep(0.2)
        assert list(out.glob(".staging-*")), "evaluate made no staging folder within 120 s"
        time.sleep(1.0)
        t0 = time.time()
        if sig == signal.SIGINT: os.killpg(run.pid, sig)
        else: os.kill(run.pid, sig)
        _, err = run.communicate(timeout=30)
        assert time.time() - t0 < 10, f"evaluate took {time.time() - t0:.0f} s to stop after {sig.name}"
        assert run.returncode == 130 and "Traceback" not in err, (run.returncode, err[-2000:])
        assert "interrupted" in err, err
        assert not (tmp_path/"runs").exists(), f"the interrupted run left {sorted(p.relative_to(tmp_path) for p in (tmp_path/'runs').rglob('*'))}"
    finally:
        if run.poll() is None: run.kill()


def test_papermill_run_stopped_by_sigterm_leaves_nothing_running(tmp_path):
    """An experiment run directly with papermill (`papermill nbs/exp_beta.ipynb ...`), stopped with SIGTERM while its three
    training workers train: the kernel notices that papermill is gone and shuts down, and the workers end with it, within
    15 s. (A rerun resumes from the checkpoints, written atomically: 62_generation's lessons.)"""
    import uuid
    from test_processes import marked
    mark = uuid.uuid4().hex
    env = os.environ | {"FEWSHOT_TEST_MARK": mark, "OMP_NUM_THREADS": "1", "FEWSHOT_PROGRESS": "0", "FEWSHOT_CACHE": str(tmp_path/"cache")}
    root = Path(__file__).resolve().parents[1]
    pm = subprocess.Popen([str(Path(sys.executable).parent/"papermill"), str(root/"nbs"/"exp_beta.ipynb"), str(tmp_path/"out.ipynb"),
                           "-p", "out_dir", str(tmp_path/"out")], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          start_new_session=True)
    try:
        deadline = time.time() + 240
        while time.time() < deadline and sum("spawn_main" in c for _, c in marked(mark)) < 3:
            assert pm.poll() is None, f"papermill ended (exit {pm.returncode}) before the training started"
            time.sleep(1)
        assert sum("spawn_main" in c for _, c in marked(mark)) >= 3, f"the training workers did not start: {marked(mark)}"
        pm.terminate(); pm.wait(timeout=30)
        t0 = time.time()
        while marked(mark) and time.time() - t0 < 15: time.sleep(0.5)
        assert not marked(mark), f"still running {time.time() - t0:.0f} s after papermill was stopped: {marked(mark)}"
    finally:
        for pid, _ in marked(mark):
            try: os.kill(pid, signal.SIGKILL)
            except ProcessLookupError: pass
        if pm.poll() is None: pm.kill()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")   # the dropped exception, reported by pytest
def test_an_interrupt_dropped_in_a_finaliser_still_stops_the_run():
    """Python drops the KeyboardInterrupt that a signal raises while a finaliser runs (`__del__`: "Exception ignored in ...")
    and goes on, so a Ctrl-C can be lost. Within `terminate_as_interrupt` the handler remembers it, and the long loops
    (the solvers' chunks, the trainer's steps) call `check_interrupt`, which raises it again."""
    import gc
    import torch
    from fewshot_nb import workers
    from fewshot_nb.workers import terminate_as_interrupt, check_interrupt
    from fewshot_nb.solvers.base import ProtoNet, solve_batch
    from fewshot_nb.testing import synthetic_features
    from fewshot_nb.data.samplers import EpisodeSampler
    class Swallows:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.5)   # the handler runs here, inside the finaliser: its exception is dropped
    src, _ = synthetic_features(n_classes=10, n_per_class=20, dim=8, seed=0)
    tasks = EpisodeSampler(src, n_way=5, n_shot=1, n_query=5).sample_batch(20, seed=0)
    with terminate_as_interrupt():
        Swallows(); gc.collect()                                       # no KeyboardInterrupt here: dropped, and the code went on
        assert workers._interrupted.is_set()                           # ... but the signal was seen
        with pytest.raises(KeyboardInterrupt): solve_batch(ProtoNet(), src, tasks, chunk=5)
    check_interrupt()                                                  # the block's end forgets it
    assert len(solve_batch(ProtoNet(), src, tasks)) == 20
