"""No process outlives a stopped run (issue 39, step 3; issue 40, step 1).

A papermill run of `exp_beta` is started with two training workers (`n_jobs=2`, a long training), in its own session,
with a marker in its environment that every process it starts inherits (the kernel, the kernel's training workers).
Once the workers train, papermill is stopped, with SIGTERM (what a time limit sends) or SIGKILL (what the
out-of-memory killer sends, and what leaves no chance to clean up). Within a few seconds no process carrying the
marker may be left: the kernel exits when papermill is gone (jupyter_client tells it its parent), and the workers
when the kernel is gone (`fewshot_nb.workers.worker_pool`).
"""
import os, signal, subprocess, sys, time, uuid
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
PAPERMILL = str(Path(sys.executable).with_name("papermill"))


def cpu_seconds(pid:int) -> float:
    "CPU time a process has used (user + system), from /proc; 0 if it is gone."
    try: f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError: return 0.0
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def marked(mark:str) -> list[tuple[int, str]]:
    "(pid, command line) of every live process whose environment holds FEWSHOT_TEST_MARK=mark (zombies left out)."
    out = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit(): continue
        try:
            if f"FEWSHOT_TEST_MARK={mark}".encode() not in (p/"environ").read_bytes().split(b"\0"): continue
            if (p/"stat").read_text().rsplit(")", 1)[1].split()[0] == "Z": continue
            out.append((int(p.name), (p/"cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:120]))
        except (FileNotFoundError, ProcessLookupError, PermissionError): continue
    return out


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_stopping_papermill_leaves_no_process(tmp_path, sig):
    mark = uuid.uuid4().hex
    env = os.environ | {"FEWSHOT_TEST_MARK": mark, "OMP_NUM_THREADS": "1"}
    cmd = [PAPERMILL, str(ROOT/"nbs"/"exp_beta.ipynb"), str(tmp_path/"run.ipynb"), "--cwd", str(ROOT),
           "-p", "betas", "[1, 3]", "-y", "epochs: null", "-p", "steps", "100000", "-p", "n_jobs", "2",
           "-p", "n_per_class", "5", "-p", "out_dir", str(tmp_path/"out"), "-p", "checkpoints", str(tmp_path/"ck"),
           "-y", "{grid_runs: [], long_run: null}"]
    run = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.time() + 240
        while time.time() < deadline:   # until both training workers are up (spawned interpreters of multiprocessing)
            if sum("spawn_main" in c for _, c in marked(mark)) >= 2: break
            assert run.poll() is None, f"papermill ended (exit {run.returncode}) before its workers started"
            time.sleep(1)
        else: pytest.fail(f"the training workers did not start within 240 s: {marked(mark)}")
        # a spawned worker still reading its start-up data from its parent would end with it anyway: wait until both
        # have spent 8 s of CPU, well past importing torch, so that they are training
        workers = [pid for pid, c in marked(mark) if "spawn_main" in c]
        while time.time() < deadline and min(map(cpu_seconds, workers)) < 8: time.sleep(1)
        assert min(map(cpu_seconds, workers)) >= 8, f"the workers did not get to train: {marked(mark)}"
        os.kill(run.pid, sig); run.wait(timeout=30)
        for _ in range(60):             # the kernel polls its parent every second, the workers every 0.25 s
            if not marked(mark): break
            time.sleep(0.5)
        left = marked(mark)
        assert not left, f"processes of the stopped run still running after {sig.name}: {left}"
    finally:   # whatever happened, leave nothing behind on the machine
        for pid, _ in marked(mark):
            try: os.kill(pid, signal.SIGKILL)
            except ProcessLookupError: pass
        if run.poll() is None: run.kill()
