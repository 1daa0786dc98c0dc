"""`fewshot-nb reproduce` on the library's own experiments (issue 39): every experiment at the smoke preset through a
real Slurm, with the report and the findings checked, then a second run that submits nothing; and a stopped run
(SIGTERM, SIGKILL) that leaves no process behind: not its sweep workers, not their kernels, not the training workers.

CI starts a one-node Slurm (tools/slurm_local.sh) and sets FEWSHOT_REQUIRE_SLURM, so the Slurm test runs there; on a
machine without Slurm it is skipped.
"""
import os, signal, subprocess, sys, time, uuid
from pathlib import Path
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_processes import marked, cpu_seconds
from test_sweep import require_slurm

ROOT = Path(__file__).resolve().parent.parent
CLI = str(Path(sys.executable).with_name("fewshot-nb"))
EXPERIMENTS = sorted(p.stem for p in (ROOT/"nbs").glob("exp_*.ipynb"))
from fewshot_nb.bench.findings import VERDICTS, verdict_base


SMOKE_ELSEWHERE = {   # smoke runs of minutes each, tested on their own (tests/test_papermill.py, tests/test_reproducibility.py)
    "exp_generation": "test_exp_generation_injected_every_figure_and_rerun_loads",
    "exp_reproducibility": "test_exp_reproducibility_tiny_study_resumes_and_analyses",
}
SMOKE_IN_PAPERMILL = {   # their smoke preset run by a test of their own, with its files checked and a second run (tests/test_papermill.py)
    "exp_beta": "test_exp_beta_injected_and_rerun_loads_checkpoints",
    "exp_lake_runs": "test_exp_lake_runs_with_injected_parameters",
    "exp_realistic": "test_exp_realistic_injected_and_rerun_reuses_features",
}
# Through Slurm, the experiments whose smoke preset no other test runs: what Slurm adds (the job array, the findings of
# every experiment in one table and report, a second command that submits nothing) needs no more; every experiment goes
# through `reproduce` in test_paper_dry_run_of_every_experiment (saves 110 s of CI's CPU)
SLURM_SMOKE = [e for e in EXPERIMENTS if e not in SMOKE_ELSEWHERE and e not in SMOKE_IN_PAPERMILL]


def test_every_smoke_preset_runs_in_ci():
    "Each experiment's smoke preset is run through Slurm below or by the test named for it, which exists and sets the preset."
    sources = {p.name: p.read_text() for p in Path(__file__).parent.glob("test_*.py")}
    for e, test in {**SMOKE_ELSEWHERE, **SMOKE_IN_PAPERMILL}.items():
        body = next((t.split(f"def {test}(", 1)[1].split("\ndef ", 1)[0] for t in sources.values() if f"def {test}(" in t), None)
        assert body is not None, f"{e}: no test named {test}"
        assert e in body or e in sources["test_reproducibility.py"], f"{test} does not run {e}"
        assert 'preset="smoke"' in body or "TINY" in body, f"{test} does not run {e}'s smoke preset"
    assert set(SLURM_SMOKE) | set(SMOKE_ELSEWHERE) | set(SMOKE_IN_PAPERMILL) == set(EXPERIMENTS)


def test_smoke_through_slurm_then_nothing_submitted(tmp_path):
    """`reproduce --preset smoke --executor slurm`: the experiments through a real one-node Slurm (job array), their
    findings in one table and one self-contained report, then the same command submits nothing. The experiments whose
    smoke preset another test runs (SMOKE_ELSEWHERE, SMOKE_IN_PAPERMILL) are left to those tests."""
    require_slurm()
    EXPERIMENTS = SLURM_SMOKE
    out = tmp_path/"smoke"
    cmd = [CLI, "reproduce", *EXPERIMENTS, "--preset", "smoke", "--out", str(out), "--executor", "slurm", "--threads", "1",
           "--slurm-time", "30", "--slurm", "array_parallelism=2"]
    env = os.environ | {"OMP_NUM_THREADS": "1", "FEWSHOT_PROGRESS": "0"}
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=2400, env=env)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    F = pd.read_csv(out/"findings.csv")
    assert set(F.experiment) == set(EXPERIMENTS), f"experiments without findings: {set(EXPERIMENTS) - set(F.experiment)}"
    assert set(F.verdict.map(verdict_base)) <= set(VERDICTS) and set(F.kind) <= {"paper", "control", "extension"} and F.finding.notna().all() and F.run.notna().all()
    html = (out/"report"/"index.html").read_text()
    assert "data:image/png;base64," in html and "The papers&#x27; claims" in html   # self-contained: figures embedded
    md = (out/"report"/"README.md").read_text()
    assert all(e in md for e in EXPERIMENTS)
    assert "preset smoke" in md, "the run records do not say which values the preset set"
    assert all((out/f"{e}.ipynb").is_file() for e in EXPERIMENTS)               # one executed notebook per experiment
    jobs = sorted(p.name for p in (out/"slurm").iterdir())
    records = {p: p.stat().st_mtime_ns for p in out.glob("*/points/*/record.json")}
    assert len(records) == len(EXPERIMENTS) >= 3 and jobs
    second = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    assert sorted(p.name for p in (out/"slurm").iterdir()) == jobs, "the second run submitted jobs"
    assert {p: p.stat().st_mtime_ns for p in records} == records, "the second run ran a finished experiment again"
    assert second.stdout.count(" done ") >= len(EXPERIMENTS), second.stdout


_SIGTERM_IN_CI = pytest.mark.skipif(not os.environ.get("FEWSHOT_SLOW"), reason="slow (about a minute): SIGTERM turns into the "
    "KeyboardInterrupt of Ctrl-C in the CLI's one entry point, which CI checks with `evaluate` (tests/test_signals.py), and a "
    "papermill run of exp_beta stopped by SIGTERM while it trains is checked there too; FEWSHOT_SLOW=1 runs this one")


@pytest.mark.parametrize("sig", [signal.SIGINT, pytest.param(signal.SIGTERM, marks=_SIGTERM_IN_CI), signal.SIGKILL],
                         ids=["SIGINT", "SIGTERM", "SIGKILL"])
def test_stopping_reproduce_leaves_no_process(tmp_path, sig):
    """exp_beta at its default preset, stopped once its training workers train: nothing of the run is left. SIGINT goes to the
    whole process group, as Ctrl-C in a terminal, SIGTERM to the command alone, as `kill` or a batch system sends it: either
    way the command ends within 10 s, with status 130 and no traceback, and the interrupted experiment is pending, so that
    the same command resumes it. SIGKILL cannot be caught: then the workers notice that their parent is gone."""
    mark = uuid.uuid4().hex
    env = os.environ | {"FEWSHOT_TEST_MARK": mark, "OMP_NUM_THREADS": "1", "FEWSHOT_CACHE": str(tmp_path/"cache")}   # no cached checkpoint: it trains
    cmd = [CLI, "reproduce", "exp_beta", "--preset", "default", "--out", str(tmp_path/"r"), "--threads", "1"]
    errf = tmp_path/"stderr.txt"
    run = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=errf.open("w"), start_new_session=True)
    try:
        deadline = time.time() + 300
        while time.time() < deadline:   # reproduce -> its sweep worker -> papermill's kernel -> two training workers
            if sum("spawn_main" in c for _, c in marked(mark)) >= 3: break   # the sweep worker and the two training workers
            assert run.poll() is None, f"reproduce ended (exit {run.returncode}) before the training started"
            time.sleep(1)
        else: pytest.fail(f"the training workers did not start within 300 s: {marked(mark)}")
        trainers = lambda: [pid for pid, c in marked(mark) if "spawn_main" in c]
        while time.time() < deadline and sorted(map(cpu_seconds, trainers()))[-2] < 8: time.sleep(1)   # both trainers past their imports
        t0 = time.time()
        if sig == signal.SIGINT: os.killpg(run.pid, sig)   # Ctrl-C: the terminal signals the foreground process group
        else: os.kill(run.pid, sig)
        run.wait(timeout=30)
        if sig != signal.SIGKILL:
            err = errf.read_text()
            assert time.time() - t0 < 10, f"reproduce took {time.time() - t0:.0f} s to stop after {sig.name}"
            assert run.returncode == 130 and "Traceback" not in err, (run.returncode, err[-2000:])
            from fewshot_nb.sweep import point_state
            assert [point_state(p) for p in (tmp_path/"r").glob("exp_beta/points/*")] == ["pending"]
        for _ in range(60):
            if not marked(mark): break
            time.sleep(0.5)
        left = marked(mark)
        assert not left, f"processes of the stopped reproduce still running after {sig.name}: {left}"
    finally:
        for pid, _ in marked(mark):
            try: os.kill(pid, signal.SIGKILL)
            except ProcessLookupError: pass
        if run.poll() is None: run.kill()


HEAVY_DRY_RUNS = {   # minutes each on a CPU: FEWSHOT_SLOW=1 runs them; CI checks their paper shapes by the two tests below
    "exp_generation": "every model's sampling at the paper's architectures and 50 px, about 7 minutes",
    "exp_reproducibility": "24 + 4 runs of exp_training_run at the paper's width, about 6 minutes",
}


def _dry_run(tmp_path, experiments):
    "`reproduce --preset paper --dry-run` of `experiments`; its run records checked."
    out = tmp_path/"paper"
    env = os.environ | {"OMP_NUM_THREADS": "1", "FEWSHOT_PROGRESS": "0", "FEWSHOT_CACHE": str(tmp_path/"cache")}   # no cached weights: everything is built
    r = subprocess.run([CLI, "reproduce", *experiments, "--preset", "paper", "--dry-run", "--out", str(out), "--jobs", "2", "--threads", "1"],
                       capture_output=True, text=True, timeout=2400, env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert f"dry run: {len(experiments)} of {len(experiments)}" in r.stdout, r.stdout
    assert not (out/"report").exists() and not (out/"findings.csv").exists(), "a dry run wrote a report"
    import json
    for e in experiments:
        rec = [json.loads(p.read_text()) for p in (out/"dry_run"/e).glob("points/*/out/run.json")]
        assert len(rec) == 1, f"{e}: no run record of its dry run"
        params, sources = rec[0]["params"], rec[0]["extra"]["parameter_sources"]
        assert params["preset"] == "paper" and params["dry_run"] is True, (e, params)
        assert "preset paper" in sources.values() and "dry run" in sources.values(), (e, sources)


def test_paper_dry_run_of_every_experiment(tmp_path):
    """`reproduce --preset paper --dry-run`: every experiment notebook runs at the paper's architectures, image sizes, ways
    and shots, with the counts cut to one batch (its DRY_RUN), on this CPU, so that a paper-scale run on a GPU node
    cannot fail on a shape or a name. The run records say the values came from the preset and the dry run. The two
    heavy ones (HEAVY_DRY_RUNS) run with FEWSHOT_SLOW=1 (test below); their shapes are checked here at smaller cost."""
    _dry_run(tmp_path, [e for e in EXPERIMENTS if e not in HEAVY_DRY_RUNS])


@pytest.mark.skipif(not os.environ.get("FEWSHOT_SLOW"), reason="slow: " + "; ".join(f"{e}: {w}" for e, w in HEAVY_DRY_RUNS.items()))
def test_paper_dry_run_of_the_heavy_experiments(tmp_path):
    _dry_run(tmp_path, list(HEAVY_DRY_RUNS))


def test_generation_models_take_the_papers_shapes():
    """What exp_generation's paper dry run proves, at a fraction of its cost: each model of Fig. 3a at the paper's
    architecture and 50 px trains one step (loss and backward) and draws from prototypes, the VAE-NS with a context
    of 20 and the VAE-STN with 90 attention steps (the ends of the sweeps of Fig. 4a)."""
    import torch
    from fewshot_nb.generation.base import make_generator
    from fewshot_nb.data.streams import ImageSource
    from fewshot_nb.generation.base import generate_samples
    g = torch.Generator().manual_seed(0)
    data = ImageSource((torch.rand(84, 1, 50, 50, generator=g) > 0.8).float(), torch.arange(84) % 4)   # 21 images a class
    for name, kw in (("vae_ns", {}), ("vae_stn", {}), ("dagan_un", {}), ("dagan_rn", {}), ("vae_ns", dict(set_size=20)), ("vae_stn", dict(n_steps=90))):
        torch.manual_seed(0)
        m = make_generator(name, "paper", image_size=50, **kw)
        batch = m.batches(data, 2).batch(0, seed=0)
        loss, _ = m.loss(batch)                  # (the GANs' loss: both players' terms, as the trainer steps them)
        loss.backward(); assert torch.isfinite(loss), (name, kw)
        x = generate_samples(m, data.x[:2], 2, seed=0)
        assert tuple(x.shape) == (2, 2, 1, 50, 50) and float(x.min()) >= 0 and float(x.max()) <= 1, (name, kw, tuple(x.shape))


@pytest.mark.parametrize("regime", ["protonet", "matchingnet", "pretrain"])
def test_reproducibility_regimes_take_the_papers_shapes(regime):
    """What exp_reproducibility's paper dry run proves, at a fraction of its cost: each of its algorithms, with each
    optimiser, trains a step at the paper's width (64) and episodes (20-way 5-shot 15-query training)."""
    import torch
    from fewshot_nb.training.regimes import train_regime
    from fewshot_nb.data.streams import ImageSource
    g = torch.Generator().manual_seed(0)
    data = ImageSource(torch.rand(20 * 20, 1, 28, 28, generator=g), torch.arange(20 * 20) % 20)   # 20 classes of 20 images
    for optimizer in ("adam", "sgd"):
        method, hist, _ = train_regime(regime, data, steps=1, backbone_kw=dict(width=64), train_way=20, train_shot=5, train_query=15,
                                       batch_size=128, optimizer=optimizer, progress=False)
        assert len(hist) >= 1 and torch.isfinite(torch.tensor(hist.loss.to_numpy(dtype=float))).all(), (regime, optimizer, hist)


def test_bongard_backbones_take_the_papers_512_px():
    "The one shape the dry run of exp_bongard leaves out (it runs at 64 px): ResNet-15 at the paper's width on 512 px images."
    import torch
    from fewshot_nb.bongard.baselines import ResNet15
    torch.manual_seed(0)
    for channels in (1, 7):   # one image; the CNN-Baseline's stack of seven
        net = ResNet15(channels, width=32, out_dim=128).eval()
        with torch.no_grad(): assert net(torch.rand(1, channels, 512, 512)).shape == (1, 128)
