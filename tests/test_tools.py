"""tools/run_notebooks.py: stores a notebook's outputs as the tests run it, and loses nothing when a cell fails."""
import importlib.util
from pathlib import Path
import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("run_notebooks", ROOT/"tools"/"run_notebooks.py")
run_notebooks = importlib.util.module_from_spec(_spec); _spec.loader.exec_module(run_notebooks)
SKIP = {"notest", "slow", "cuda"}


def _notebook(path, *sources, old_output="kept"):
    "A notebook of code cells; each cell starts with a stored output `old_output`."
    nb = nbformat.v4.new_notebook()
    for s in sources:
        cell = nbformat.v4.new_code_cell(s)
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=old_output)]
        nb.cells.append(cell)
    nbformat.write(nb, path)
    return path


def _texts(path):
    return ["".join(o.get("text", "") or "".join(o.get("data", {}).get("text/plain", "")) for o in c.outputs)
            for c in nbformat.read(path, as_version=4).cells]


def test_runs_cells_and_keeps_flagged_outputs(tmp_path):
    nb = _notebook(tmp_path/"a.ipynb", "x = 20 + 22\nx", "#| notest\nraise RuntimeError('must not run')", "print(x + 1)")
    run_notebooks.run_notebook(nb, SKIP)
    assert _texts(nb) == ["42", "kept", "43\n"]
    assert not list(tmp_path.glob(".*.tmp"))


def test_runs_in_the_notebooks_folder(tmp_path):
    (tmp_path/"data.txt").write_text("here")
    nb = _notebook(tmp_path/"b.ipynb", "open('data.txt').read()")
    run_notebooks.run_notebook(nb, SKIP)
    assert _texts(nb) == ["'here'"]


def test_a_failing_cell_leaves_the_notebook_untouched(tmp_path):
    nb = _notebook(tmp_path/"c.ipynb", "y = 1", "raise ValueError('broken')", "y")
    before = nb.read_bytes()
    with pytest.raises(Exception, match="broken"): run_notebooks.run_notebook(nb, SKIP)
    assert nb.read_bytes() == before
    assert not list(tmp_path.glob(".*.tmp"))


def test_flags_named_on_the_command_line_run(tmp_path):
    nb = _notebook(tmp_path/"d.ipynb", "#| slow\nprint('slow ran')")
    run_notebooks.run_notebook(nb, SKIP - {"slow"})
    assert _texts(nb) == ["slow ran\n"]


def test_show_doc_outputs_are_not_stored(tmp_path):
    "The docs build makes show_doc's output from the code; a stored copy would only go stale."
    nb = _notebook(tmp_path/"e.ipynb", "def show_doc(f): return 'doc of ' + f", "#| hide\nshow_doc('g')", "show_doc('h')")
    run_notebooks.run_notebook(nb, SKIP)
    assert _texts(nb) == ["", "", ""]
    nb2 = _notebook(tmp_path/"f.ipynb", "show_doc(f)", "1 + 1")
    run_notebooks.main(["--tidy", str(nb2)])
    assert _texts(nb2) == ["", "kept"]


def test_stored_figures_get_a_palette_that_keeps_their_look(tmp_path):
    "A plot re-encoded with 256 colours is smaller, and no pixel moves by more than a few levels."
    import base64, io
    import numpy as np
    from PIL import Image
    import matplotlib; matplotlib.use("Agg"); import matplotlib.pyplot as plt
    fig, ax = plt.subplots(dpi=100); ax.scatter(range(300), [i ** 0.5 for i in range(300)], c=range(300)); ax.set_title("a plot")
    buf = io.BytesIO(); fig.savefig(buf, format="png"); plt.close(fig); original = buf.getvalue()
    (tmp_path/"plot.png").write_bytes(original)   # the notebook shows this figure
    nb = _notebook(tmp_path/"g.ipynb", "from IPython.display import Image\nImage(filename='plot.png')")
    run_notebooks.run_notebook(nb, SKIP)
    stored = base64.b64decode(nbformat.read(nb, as_version=4).cells[0].outputs[0]["data"]["image/png"])
    assert len(stored) < 0.6 * len(original)
    a = np.asarray(Image.open(io.BytesIO(stored)).convert("RGB"), dtype=int)
    b = np.asarray(Image.open(io.BytesIO(original)).convert("RGB"), dtype=int)
    assert a.shape == b.shape and np.abs(a - b).mean() < 1 and np.percentile(np.abs(a - b), 99.9) <= 16
    assert run_notebooks.palette_png(stored) == stored   # a palette image is kept as it is


_spec2 = importlib.util.spec_from_file_location("sweep_trends", ROOT/"tools"/"sweep_trends.py")
sweep_trends = importlib.util.module_from_spec(_spec2); _spec2.loader.exec_module(sweep_trends)


def _sweep_results(slope_r, slope_d, seeds=(0, 1, 2), n_classes=12):
    "A results.csv of one VAE-NS latent sweep (z = 4, 16, 64) whose scores move by `slope_*` per step, plus class noise."
    import numpy as np, pandas as pd
    rng = np.random.default_rng(0)
    rows = []
    for seed in seeds:
        for step, z in enumerate([4, 16, 64]):
            for c in range(n_classes):
                r = 0.5 + slope_r * step + rng.normal(0, 0.01)
                rows.append(dict(**{"class": f"c{c}"}, diversity=20 + slope_d * step + rng.normal(0, 0.1), recognizability_frac=r,
                                 experiment="fig3a" if z == 16 else "latent", model="vae_ns", variant="base" if z == 16 else f"z {z}",
                                 seed=seed, n_steps=None, z_dim=None if z == 16 else z))
    return pd.DataFrame(rows)


def test_sweep_trends_finds_a_planted_trend_and_no_other():
    t = sweep_trends.trends(_sweep_results(0.05, -2.0))
    assert len(t) == 3 and t.n_classes.eq(12).all()
    step = t[(t.setting_low == 4) & (t.setting_high == 16)].iloc[0]
    assert step.recognizability_diff_pp == pytest.approx(5, abs=1) and step.diversity_diff == pytest.approx(-2, abs=0.3)
    assert sweep_trends.monotonic(t, "recognizability")["latent", "vae_ns"] == "rises"
    assert sweep_trends.monotonic(t, "diversity")["latent", "vae_ns"] == "falls"
    flat = sweep_trends.trends(_sweep_results(0.0, 0.0))
    assert sweep_trends.monotonic(flat, "recognizability")["latent", "vae_ns"] == "none"


def test_sweep_trends_refuses_a_run_without_a_sweep():
    r = _sweep_results(0.0, 0.0)
    with pytest.raises(ValueError, match="no latent or attention sweep"): sweep_trends.trends(r[r.experiment == "fig3a"])


def test_stored_sweep_trends_are_those_of_its_results(tmp_path):
    "trends.csv of the stored three-seed sweep is what the tool computes from the stored results.csv."
    import shutil, pandas as pd
    src = ROOT/"nbs"/"results"/"exp_generation_sweeps3"
    shutil.copy(src/"results.csv", tmp_path/"results.csv")
    sweep_trends.main([str(tmp_path)])
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path/"trends.csv"), pd.read_csv(src/"trends.csv"))


def test_gen_threads_refuses_a_bad_thread_count(tmp_path):
    "tools/gen_threads.py (the thread-count re-runs of nbs/results/exp_generation_threads) refuses --threads 0 before any work."
    import subprocess, sys
    r = subprocess.run([sys.executable, str(ROOT/"tools"/"gen_threads.py"), "--threads", "0", "--out", str(tmp_path/"out")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--threads must be >= 1, got 0" in r.stderr, r.stderr
    assert not (tmp_path/"out").exists()



def test_s17_overfit_writes_its_curves_and_refuses_bad_arguments(tmp_path):
    """tools/s17_overfit.py (the stored run nbs/results/exp_generation_s17, claim bg.s17.classifier_overfits): a tiny run
    writes each network's losses before training and after each epoch, and one test loss per held-out drawing or episode;
    a bad argument is refused before any work."""
    import subprocess, sys, pandas as pd
    tool = str(ROOT/"tools"/"s17_overfit.py")
    r = subprocess.run([sys.executable, tool, "--epochs", "0", "--out", str(tmp_path/"bad")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "--epochs must be >= 1, got 0" in r.stderr, r.stderr
    assert not (tmp_path/"bad").exists()
    r = subprocess.run([sys.executable, tool, "--epochs", "2", "--episodes", "2", "--eval-tasks", "4", "--max-classes", "30", "--threads", "1",
                        "--out", str(tmp_path/"out")], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    L, T = pd.read_csv(tmp_path/"out"/"losses.csv"), pd.read_csv(tmp_path/"out"/"test_losses.csv.gz")
    assert sorted(set(zip(L.model, L.epoch, L.split))) == sorted((m, e, s) for m in ("classifier", "protonet") for e in range(3) for s in ("test", "train"))
    assert len(T[T.model == "classifier"]) == 3 * 30 * 2 and len(T[T.model == "protonet"]) == 3 * 4   # 2 held-out drawings a class; 4 episodes
    assert T.loss_nats.gt(0).all() and L[L.epoch == 0].acc_frac.lt(0.5).all()   # untrained: near chance
    assert (tmp_path/"out"/"run.json").is_file()


def test_bench_malloc_measures_both_settings_and_refuses_a_bad_count(monkeypatch, capsys):
    """tools/bench_malloc.py (the figure behind README's MALLOC_* advice): the kept-buffers run gets the two variables and
    the default run neither, whatever this process has; --repeat 0 is refused."""
    spec = importlib.util.spec_from_file_location("bench_malloc", ROOT/"tools"/"bench_malloc.py")
    bm = importlib.util.module_from_spec(spec); spec.loader.exec_module(bm)
    seen = []
    monkeypatch.setattr(bm, "run", lambda env: seen.append({k: env.get(k) for k in bm.KEEP}) or dict(wall=1.0, user=1.0, sys=0.5, peak_mb=100.0))
    bm.main(["--repeat", "2"])
    assert seen == [dict.fromkeys(bm.KEEP), bm.KEEP] * 2   # alternating, the defaults first
    assert "buffers kept" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e: bm.main(["--repeat", "0"])
    assert e.value.code == 2


# each pilot tool -> the README of the decision it sized, whose table registered what the tool printed
PILOTS = {"unet_pilot.py": "exp_generation_unet_decide", "context_pilot.py": "exp_generation_context_decide",
          "fig5a_pilot.py": "exp_generation_fig5a_decide", "fig5b_pilot.py": "exp_generation_fig5b_decide",
          "latent_pilot.py": "exp_generation_latent_decide",
          "realistic_pilot.py": "exp_realistic_decide_shares",
          "beta_pilot.py": "exp_beta_seeds3", "stn_amplitude_pilot.py": "exp_beta_vae_stn_seeds3",
          "attention_pilot.py": "exp_generation_attention"}   # the last three: pilots that decided against a decision run
# (their READMEs' odds, no run)


def _probabilities(text):   # claim id -> the probabilities a pilot tool prints for it (its k lines, or the end of its row)
    import re
    out, claim = {}, None
    for line in text.splitlines():
        if m := re.match(r"^(\w+\.[\w.]+)\b", line):
            claim = m.group(1); out[claim] = [float(x) for x in re.findall(r"\d\.\d\d", line.rsplit("]", 1)[-1])]
        elif claim and (m := re.search(r"k = +\d+ fresh seeds: .* = (\d\.\d\d)$", line)):
            out[claim].append(float(m.group(1)))
    return out


@pytest.mark.parametrize("tool", sorted(PILOTS))
def test_a_pilot_tool_prints_the_odds_its_decision_registered(tool):
    "Run from the repository's stored pilot runs, each pilot tool prints the probabilities the decision's README registered."
    import re, subprocess, sys
    r = subprocess.run([sys.executable, str(ROOT/"tools"/tool)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]
    printed = _probabilities(r.stdout)
    readme = (ROOT/"nbs"/"results"/PILOTS[tool]/"README.md").read_text()
    table = {m.group(1): [float(x) for x in m.group(2).split("|")] for m in re.finditer(r"^\| ([a-z]+\.[\w.]+) \| ([\d. |]+?) \|$", readme, re.M)}
    assert table and set(table) <= set(printed), (sorted(table), sorted(printed))
    for claim, row in table.items():   # P is a share of 4,000 simulated draws on stored numbers, printed to 2 decimals: a last-bit
        # difference between CPUs can flip a draw at the threshold (1/4000) and so the rounding, by 0.01 at most
        assert printed[claim] == pytest.approx(row, abs=0.01 + 1e-9), f"{tool}: {claim} prints {printed[claim]}, {PILOTS[tool]}/README.md registered {row}"
