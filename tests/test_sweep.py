"""Sweeps end to end, in real processes: a 2 x 2 sweep of exp_lake_runs run locally and on a one-node Slurm
cluster, each killed half-way, resumed with the same command, and collected into the table of an
uninterrupted run. (The notebook nbs/70_sweep.ipynb teaches the API on a toy notebook.)"""
import json, os, shutil, signal, subprocess, sys, time
from pathlib import Path
import pandas as pd
import pytest
from fewshot_nb.sweep import Sweep, run_sweep, sweep_status, status_counts, collect

ROOT = Path(__file__).resolve().parent.parent
GRID = dict(n_way=[5, 10], seed=[0, 1])                          # 2 x 2 points: two run while two wait
N_POINTS = 4
FIXED = dict(n_tasks=12, image_size=20, runs_image_size=28, baselines=["pixel_nn"])   # tiny: about 12 s a point (MHD, 5 s more, is not what a sweep tests)


def lake_sweep(out, **kw):
    return Sweep(str(ROOT/"nbs"/"exp_lake_runs.ipynb"), str(out), grid=GRID, fixed=FIXED, **kw)


def sweep_file(path, out, executor):
    path.write_text(lake_sweep(out).to_yaml() + f"executor: {json.dumps(executor)}\n")
    return path


def cli(*args, **kw):
    "The console script's code, in a new process (and a new process group, so that it can be killed whole)."
    return subprocess.Popen([sys.executable, "-c", "import sys; from fewshot_nb.sweep import main; sys.exit(main())", *args],
                            cwd=ROOT, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def wait_for(cond, timeout, what):
    t0 = time.time()
    while not cond():
        if time.time() - t0 > timeout: raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.5)


def sorted_table(t):
    return t.sort_values(["point", "setting", "method", "task"]).reset_index(drop=True)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    "The collected table of the same sweep, run without interruption on the local executor."
    sw = lake_sweep(tmp_path_factory.mktemp("reference"))
    table = run_sweep(sw, workers=2, cwd=str(ROOT), progress=False)
    assert status_counts(table)["done"] == N_POINTS, table
    return sorted_table(collect(sw))


def test_local_sweep_killed_then_resumed(tmp_path, reference):
    out = tmp_path/"sweep"
    f = sweep_file(tmp_path/"lake.yaml", out, dict(kind="local", workers=2, threads=1))
    sw = Sweep.from_yaml(f)
    done = lambda: status_counts(sweep_status(sw))["done"]
    proc = cli("run", str(f))
    wait_for(lambda: done() >= 2, 300, "two finished points")
    os.killpg(proc.pid, signal.SIGKILL); proc.wait()              # the command, its workers and their kernels, at once
    # proc.wait() reaps the command only: a killed worker takes a moment to exit (freeing its memory), and until then
    # its marker still names a live process. Give the kernel that moment, then check what the folders say.
    wait_for(lambda: status_counts(sweep_status(sw))["running"] == 0, 60, "the killed workers to exit")
    after_kill = sweep_status(sw)
    counts = status_counts(after_kill)
    assert counts["running"] == 0 and counts["failed"] == 0, after_kill   # the killed runs are not running any more
    assert 2 <= counts["done"] < N_POINTS and counts["pending"] == N_POINTS - counts["done"], after_kill
    partial = collect(sw)
    assert set(partial.point) == set(after_kill.name[after_kill.state == "done"])   # nothing half-written collected
    stamps = {n: (out/"points"/n/"record.json").stat().st_mtime_ns for n in after_kill.name[after_kill.state == "done"]}
    proc = cli("run", str(f)); log = proc.communicate(timeout=600)[0]
    assert proc.returncode == 0, log
    assert {n: (out/"points"/n/"record.json").stat().st_mtime_ns for n in stamps} == stamps   # finished points did not run again
    proc = cli("collect", str(f)); log = proc.communicate(timeout=120)[0]
    assert proc.returncode == 0, log
    table = sorted_table(pd.read_csv(out/"collected_results.csv"))
    pd.testing.assert_frame_equal(table, reference)
    assert not list(out.rglob(".*.tmp")), "a temporary file was left behind"


def test_a_bad_last_point_refuses_the_whole_sweep(tmp_path):
    "A typo in the last point stops `fewshot-sweep run` before the first job, locally and on Slurm: nothing is written or started."
    for executor in ("local", "slurm"):
        out = tmp_path/executor
        f = tmp_path/f"{executor}.yaml"
        f.write_text(Sweep(str(ROOT/"nbs"/"exp_lake_runs.ipynb"), str(out), grid=dict(n_way=[5, 10, "twenty"]), fixed=FIXED).to_yaml()
                     + f"executor: {{kind: {executor}}}\n")
        proc = cli("run", str(f), "--no-progress"); log = proc.communicate(timeout=300)[0]
        assert proc.returncode == 2, log
        assert "point 3 of 3" in log and "parameter 'n_way' must be int, got 'twenty' (str)" in log, log
        assert not out.exists(), sorted(out.rglob("*"))


def slurm_available():
    if not shutil.which("sbatch") or not shutil.which("squeue"): return False, "sbatch and squeue are not installed"
    r = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True)
    if r.returncode or not r.stdout.strip(): return False, f"no Slurm controller answers ({(r.stderr or r.stdout).strip()[:200]})"
    return True, ""


def require_slurm():
    "Skip without Slurm (tools/slurm_local.sh up starts one), or fail where FEWSHOT_REQUIRE_SLURM says it must run (CI)."
    ok, why = slurm_available()
    if not ok:
        if os.environ.get("FEWSHOT_REQUIRE_SLURM"): pytest.fail(f"FEWSHOT_REQUIRE_SLURM is set but {why}: run tools/slurm_local.sh up")
        pytest.skip(f"no Slurm here ({why}); tools/slurm_local.sh up starts a one-node cluster")
    pytest.importorskip("submitit")


def test_slurm_sweep_cancelled_then_resumed(tmp_path, reference):
    require_slurm()
    out = tmp_path/"sweep"
    sw = lake_sweep(out)
    options = dict(timeout_min=20, cpus_per_task=1, array_parallelism=2)
    jobs = run_sweep(sw, executor="slurm", slurm=options, wait=False, cwd=str(ROOT), progress=False)
    counts = status_counts(jobs)
    assert counts["queued"] + counts["running"] + counts["done"] == N_POINTS, jobs
    done = lambda: status_counts(sweep_status(sw))["done"]
    wait_for(lambda: done() >= 1, 600, "a finished Slurm job")
    job_ids = {json.loads(p.read_text())["job_id"].split("_")[0] for p in out.glob("points/*/running.json")}
    if job_ids: subprocess.run(["scancel", *job_ids], check=True)   # cancel the rest of the array, running tasks included
    wait_for(lambda: not subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True).stdout.strip(), 120,
             "the cancelled jobs to leave the queue")
    after = sweep_status(sw)
    counts = status_counts(after)
    assert counts["running"] == counts["queued"] == 0 and 1 <= counts["done"] < N_POINTS, after   # the cancel hit unfinished points
    assert counts["done"] + counts["pending"] + counts["failed"] == N_POINTS, after
    table = run_sweep(sw, executor="slurm", slurm=options, retry_failed=True, cwd=str(ROOT), progress=False)
    assert status_counts(table)["done"] == N_POINTS, table
    pd.testing.assert_frame_equal(sorted_table(collect(sw)), reference)
