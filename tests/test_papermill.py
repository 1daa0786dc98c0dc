"""The experiment notebooks run under papermill with injected parameters (the README's main job)."""
import ast, json, os, re, subprocess, sys
from pathlib import Path
import pandas as pd
import papermill as pm
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from refusals import assert_refused

ROOT = Path(__file__).resolve().parent.parent


def test_exp_lake_runs_with_injected_parameters(tmp_path):
    out = tmp_path/"out"
    pm.execute_notebook(str(ROOT/"nbs"/"exp_lake_runs.ipynb"), str(tmp_path/"executed.ipynb"),
                        parameters=dict(preset="smoke", seed=3, out_dir=str(out)),   # smoke: 12 tasks of 5-way, 20 and 28 px
                        cwd=str(ROOT), kernel_name="python3", progress_bar=False)
    results = pd.read_csv(out/"results.csv")
    # the injected values were used: 12 sampled tasks per protocol and method, 20 runs
    counts = results.groupby(["setting", "method"]).size()
    assert counts.loc["within_alphabet"].eq(12).all() and counts.loc["unstructured"].eq(12).all()
    assert counts.loc["lake_runs"].eq(20).all()
    assert results.acc_frac.between(0, 1).all() and (results.acc_frac + results.error_frac - 1).abs().max() < 1e-9   # fractions, named so
    summary = pd.read_csv(out/"summary.csv")                                                              # ... summarised in percent
    assert {"error_pct", "half_width_pct", "low_pct", "high_pct"} <= set(summary.columns) and summary.error_pct.between(0, 100).all()
    record = json.loads((out/"run.json").read_text())
    assert record["params"]["n_tasks"] == 12 and record["params"]["n_way"] == 5 and record["seed"] == 3
    for f in ("summary.csv", "paired.csv", "findings.csv", "errors.png", "tasks_within_alphabet_seed3.npz",
              "tasks_unstructured_seed3.npz", "tasks_lake_runs.npz"):
        assert (out/f).stat().st_size > 0, f
    assert not list(out.glob(".*.tmp")), "a temporary file was left behind"


def test_exp_realistic_injected_and_rerun_reuses_features(tmp_path):
    "The smoke preset with injected parameters writes every output; a second run loads the cached features."
    out, cache = tmp_path/"out", tmp_path/"features"
    # smoke: simpleshot, tim, alpha-tim and pt-map at 1 shot, Dir(1) and Dir(5), 24 tasks, 12 validation tasks, 20 pre-training steps
    params = dict(preset="smoke", seed=1, pretrain=dict(steps=20, cache_dir=str(cache)), out_dir=str(out))
    run = lambda name: pm.execute_notebook(str(ROOT/"nbs"/"exp_realistic.ipynb"), str(tmp_path/name),
                                           parameters=params, cwd=str(ROOT), kernel_name="python3", progress_bar=False)
    run("first.ipynb")
    results = pd.read_csv(out/"results.csv")
    counts = results.groupby(["setting", "method"]).size()
    assert set(results.method) == {"simpleshot", "tim", "alpha-tim", "pt-map"} and set(results.shot) == {1}
    assert set(results.setting) == {"balanced", "dir1", "dir2", "dir5"} and counts.eq(24).all()
    tuning = pd.read_csv(out/"tuning.csv")
    assert set(zip(tuning.method, tuning.value)) == {("tim", 0.5), ("tim", 1.0), ("alpha-tim", 2.0), ("alpha-tim", 5.0)}
    assert set(tuning.part) == {"val", "test"} and tuning.n.eq(12).sum() == 4 and tuning.n.eq(24).sum() == 4
    record = json.loads((out/"run.json").read_text())
    assert record["params"]["n_tasks"] == 24 and record["seed"] == 1 and record["params"]["pretrain"]["steps"] == 20
    assert set(record["extra"]["tuned"]) == {"tim 1-shot", "alpha-tim 1-shot"}
    assert (record["params"]["preset"], record["params"]["setting"], record["params"]["structure"]) == ("smoke", "paper_range", "within_group")
    assert record["extra"]["parameter_sources"]["n_tasks"] == "preset smoke" and record["extra"]["parameter_sources"]["seed"] == "given"
    for f in ("summary.csv", "table1.csv", "paired.csv", "findings.csv", "imbalance.csv", "fig3.png", "fig4.png", "imbalance.png",
              "tasks_val_1shot_dir1_seed1.npz", "tasks_1shot_balanced_seed1.npz", "tasks_1shot_dir2_seed1.npz"):
        assert (out/f).stat().st_size > 0, f
    from fewshot_nb.data.samplers import TaskManifest
    bal, dir2 = (TaskManifest.load(out/f"tasks_1shot_{k}_seed1.npz").batch for k in ("balanced", "dir2"))
    assert (bal.support == dir2.support).all() and (bal.classes == dir2.classes).all()    # twin tasks: the drop is paired
    assert (bal.groups >= 0).all()                                                        # within-alphabet tasks
    table1 = pd.read_csv(out/"table1.csv")
    assert table1.n.eq(24).all() and (table1.drop_low_pp <= table1.drop_pp).all() and (table1.drop_pp <= table1.drop_high_pp).all()
    assert table1.balanced_pct.between(0, 100).all() and table1.dirichlet_pct.between(0, 100).all()    # percent, named so
    imbalance = pd.read_csv(out/"imbalance.csv")
    assert set(imbalance.setting) == {"1shot_dir1", "1shot_dir2", "1shot_dir5"} and imbalance.largest_share_frac.between(0, 1).all()
    from fewshot_nb.core import check_units
    for f in out.glob("*.csv"): check_units(pd.read_csv(f))                               # every table states its units
    assert pd.read_csv(out/"findings.csv").unit.notna().all()
    assert not record["extra"]["features"].get("cached")
    run("second.ipynb")
    record2 = json.loads((out/"run.json").read_text())
    assert record2["extra"]["features"]["cached"]          # features loaded from the cache, not retrained
    pd.testing.assert_frame_equal(pd.read_csv(out/"results.csv"), results)   # same features, same tasks, same numbers
    assert not list(out.rglob(".*.tmp")) and not list(cache.rglob(".*.tmp")), "a temporary file was left behind"


def test_exp_realistic_table1_methods_on_images_and_meta_trained(tmp_path):
    "Versa, SIB, LR+ICI, MAML with and without TBN and Entropy-min with backbone fine-tuning run on the same twin tasks."
    out = tmp_path/"out"
    methods = ["protonet", "versa", "sib", "lr+ici", "maml", "maml-tbn", "entropy-min-ft"]
    params = dict(preset="smoke", methods=methods, image_tasks=3, meta_steps=5, maml_steps=2, seed=1,
                  pretrain=dict(steps=20, cache_dir=str(tmp_path/"features")), out_dir=str(out))   # smoke: 24 tasks at 1 shot
    pm.execute_notebook(str(ROOT/"nbs"/"exp_realistic.ipynb"), str(tmp_path/"t1.ipynb"), parameters=params, cwd=str(ROOT),
                        kernel_name="python3", progress_bar=False)
    results = pd.read_csv(out/"results.csv")
    n = results.groupby(["method", "setting"]).size()
    assert set(results.method) == set(methods)
    for m in ("maml", "maml-tbn", "entropy-min-ft"):   # on images: the first image_tasks tasks of balanced and Dir(2) only
        assert n.loc[m].to_dict() == {"balanced": 3, "dir2": 3}, (m, n.loc[m])
        assert sorted(results[results.method == m].task.unique()) == [0, 1, 2]
    assert n.loc["versa"].eq(24).all() and n.loc["sib"].eq(24).all() and n.loc["lr+ici"].eq(24).all()
    t1 = pd.read_csv(out/"table1.csv").set_index("method")
    assert t1.loc["maml-tbn", "n"] == 3 and t1.loc["sib", "n"] == 24 and t1.loc["maml-tbn", "transductive"] and not t1.loc["maml", "transductive"]
    f = pd.read_csv(out/"findings.csv").set_index("id")
    assert f.loc["vt.maml_tbn.1", "verdict"] != "untested" and f.loc["vt.drop.maml-tbn.1", "n"] == 3   # measured, on the tasks run on images
    assert (out/"checkpoints"/"maml_1shot.pt").stat().st_size > 0
    record = json.loads((out/"run.json").read_text())
    assert {"meta_fit versa", "meta_fit sib", "maml 1-shot"} <= set(record["extra"]["timings_s"])


def test_exp_realistic_on_user_features(tmp_path):
    "Features a user saved as a FeatureSource (plus a base mean) run the same experiment; without a base mean, CL2N methods are refused."
    import torch
    from fewshot_nb.testing import synthetic_features
    src, base_mean = synthetic_features(n_classes=12, n_per_class=60, dim=32, seed=5)
    src.save(tmp_path/"feats.pt"); torch.save(base_mean, tmp_path/"base_mean.pt")
    params = dict(preset="smoke", features=str(tmp_path/"feats.pt"), base_features=str(tmp_path/"base_mean.pt"),
                  methods=["simpleshot", "tim", "alpha-tim"], out_dir=str(tmp_path/"out"))   # smoke: 24 tasks at 1 shot
    run = lambda p, name: pm.execute_notebook(str(ROOT/"nbs"/"exp_realistic.ipynb"), str(tmp_path/name), parameters=p,
                                              cwd=str(ROOT), kernel_name="python3", progress_bar=False)
    run(params, "user.ipynb")
    results = pd.read_csv(tmp_path/"out"/"results.csv")
    assert set(results.method) == {"simpleshot", "tim", "alpha-tim"} and results.groupby(["setting", "method"]).size().eq(24).all()
    record = json.loads((tmp_path/"out"/"run.json").read_text())
    assert record["extra"]["features"]["extra"]["sizes"] == {"items": 720, "classes": 12, "feature_dim": 32}
    try:
        run(params | dict(base_features=None, out_dir=str(tmp_path/"out2")), "no_base.ipynb")
    except pm.PapermillExecutionError as e:
        assert "no base features were given" in str(e) and "simpleshot" in str(e)
    else:
        raise AssertionError("CL2N methods ran without a base mean")


def test_exp_beta_injected_and_rerun_loads_checkpoints(tmp_path):
    "The main job at its smoke preset, with injected parameters, writes every output; a second run loads the models it trained."
    from fewshot_nb.generation.critics import load_critic, save_critic
    out, critics = tmp_path/"out", tmp_path/"critics"
    for kind in ("simclr", "protonet"): save_critic(load_critic(kind), critics/f"{kind}.pt")   # "your own" critics
    params = dict(preset="smoke", model="vae_stn", seed=1, critics=str(critics),   # smoke: betas 1, 3 and 5, 4 steps each, 5 queries per class
                  n_jobs=2, checkpoints=str(out/"checkpoints"), out_dir=str(out))   # n_jobs=2 over the smoke preset's 1: trained by two worker processes, then loaded
    run = lambda name: pm.execute_notebook(str(ROOT/"nbs"/"exp_beta.ipynb"), str(tmp_path/name),
                                           parameters=params, cwd=str(ROOT), kernel_name="python3", progress_bar=False)
    run("first.ipynb")
    results = pd.read_csv(out/"results.csv")
    assert set(results.beta) == {1.0, 3.0, 5.0} and set(results.model) == {"vae_stn"}
    assert results.groupby("beta").size().eq(24).all()                                  # one row per test class
    assert results.recognizability_frac.between(0, 1).all() and (results.diversity >= 0).all()
    record = json.loads((out/"run.json").read_text())
    assert record["params"]["model"] == "vae_stn" and record["params"]["steps"] == 4 and record["seed"] == 1
    assert record["params"]["critics"] == str(critics)
    assert record["extra"]["bench"]["tasks"] == 24 * 5 // 20                              # n_per_class was used
    for f in ("summary.csv", "human.csv", "fit.csv", "findings.csv", "fig_beta.png", "samples_beta1.png",
              "samples_beta5.png"):
        assert (out/f).stat().st_size > 0, f
    val, sel = pd.read_csv(out/"validation.csv"), pd.read_csv(out/"selection.csv")   # beta chosen on characters of other alphabets
    assert list(val.columns) == list(results.columns) and val.groupby("beta").size().eq(65).all()   # 01-10 of the runs' alphabets
    assert not {c.split("/")[0] for c in val["class"]} & {c.split("/")[0] for c in results["class"]}
    assert sel.groupby("part").characters.first().to_dict() == {"reported": 24, "validation": 65}
    chosen = sel[sel.chosen].beta.unique()
    assert len(chosen) == 1 and record["extra"]["selected"]["beta"]["value"] == chosen[0]
    best = val.groupby("beta").recognizability_frac.mean()
    assert best[chosen[0]] == best.max()                                                # validation's most recognizable beta
    assert len(list((out/"checkpoints").glob("*.pt"))) == 3
    stamps = {p.name: p.stat().st_mtime_ns for p in (out/"checkpoints").iterdir()}
    run("second.ipynb")
    assert {p.name: p.stat().st_mtime_ns for p in (out/"checkpoints").iterdir()} == stamps   # loaded (the MAML critic too), not retrained
    timings = json.loads((out/"run.json").read_text())["extra"]["timings_s"]
    assert set(timings["parallel_train_s"].values()) == {0.0}                            # no worker trained anything
    assert all(t["loaded"] for k, t in timings.items() if k.startswith("vae_stn_"))
    pd.testing.assert_frame_equal(pd.read_csv(out/"results.csv"), results)                 # same models, same samples
    assert not list(out.rglob(".*.tmp")), "a temporary file was left behind"


def test_exp_generation_injected_every_figure_and_rerun_loads(tmp_path):
    """exp_generation's smoke preset with every sweep and two seeds: every file; a second run, of the first seed, trains
    nothing and gives that seed's rows of the same tables."""
    out = tmp_path/"out"
    params = dict(preset="smoke", context_sizes=[2, 5], attention_steps=[4], latent_sizes={"dagan_rn": [8]},
                  seeds=[0, 1], checkpoints=str(out/"checkpoints"), out_dir=str(out))   # smoke: 3 steps per model, 5 queries per class
    run = lambda name, **kw: pm.execute_notebook(str(ROOT/"nbs"/"exp_generation.ipynb"), str(tmp_path/name),
                                                 parameters=params | kw, cwd=str(ROOT), kernel_name="python3", progress_bar=False)
    run("first.ipynb")
    summary = pd.read_csv(out/"summary.csv")
    # 4 base models + contexts 2 and 5 (5 is the base VAE-NS) + 1 attention + 1 latent size, per seed; rows per experiment
    assert len(summary) == 2 * (4 + 2 + 1 + 1) and set(summary.seed) == {0, 1}
    # context 5 shares the base's checkpoint; one MAML critic
    assert len(list((out/"checkpoints").glob("*.pt"))) == 2 * (4 + 1 + 1 + 1) + 1
    assert set(summary.experiment) == {"fig3a", "context", "attention", "latent"}
    results = pd.read_csv(out/"results.csv")
    assert results.groupby(["experiment", "variant", "model", "seed"]).size().eq(24).all()
    dist = pd.read_csv(out/"class_distances.csv")
    assert list(dist.columns) == ["class", "vae_ns", "vae_stn", "dagan_un", "dagan_rn", "unit"] and len(dist) == 24 and (dist.iloc[:, 1:5] >= 0).all().all()
    findings = pd.read_csv(out/"findings.csv").set_index("id")   # 3 steps: every model at chance, so every measured finding on the generators says so
    from fewshot_nb.bench.claims import load_claims
    claims = load_claims("boutin2022")
    assert set(findings.index[~findings.index.str.contains("@")]) == set(claims.index[claims.experiment == "exp_generation"])   # every claim of the notebook, once
    critics = ["bg.critics_agree", "bg.diversity_robust"]   # the two critics compared, not the generators
    s17 = findings.index[findings.index.str.startswith("bg.s17.")]   # S17's classifiers, from their stored run (tools/s17_overfit.py)
    assert findings.loc[s17, "note"].str.contains("measured in nbs/results/exp_generation_s17").all(), findings.loc[s17, "note"]
    gen = findings.drop(index=[*critics, *s17])
    assert findings.unit.notna().all() and findings.note.notna().all()
    measured = gen[gen.ours.notna()]
    assert {"bg.unet.recognizable", "bg.context.more_recognizable@contexts-2-5", "bg.fig5a.closest", "bg.fig5b.different_concepts"} <= set(measured.index)   # contexts 2-5: a variant of the paper's span
    assert measured.precondition.str.contains("not recognizable beyond its measured chance gate").all()   # shown beside the verdict
    assert (measured.verdict != "untested").all() and (gen[gen.ours.isna()].verdict == "untested").all()   # a verdict still given
    assert (findings.loc[["bg.unet.recognizable", "bg.fig5a.closest"], "seeds"] == 2).all()   # both seeds pooled
    assert findings.verdict["bg.latent.no_common_trend.diversity"] == "untested"   # one latent size of one model: no trend to compare
    assert findings.loc[critics, "test"].tolist() == ["effect", "effect"]   # the critics' agreements: against the paper's numbers
    controls = pd.read_csv(out/"critic_controls.csv")   # humans, the four models, pooled: both critics on the same tasks
    assert controls.source.tolist() == ["humans", "vae_ns", "vae_stn", "dagan_un", "dagan_rn", "pooled"]
    assert controls.protonet_frac.iloc[0] > 0.5 and controls[["protonet_frac", "maml_frac", "same_answer_frac"]].apply(lambda c: c.between(0, 1)).all().all()
    tsne_ = pd.read_csv(out/"tsne.csv")
    assert len(tsne_) == 2 * 20 * 20 and set(tsne_.critic) == {"Prototypical Net (labels)", "SimCLR (no labels)"}
    for f in ("fig3a.png", "fig4a.png", "fig5a.png", "fig5b.png", "fig_s4_tsne.png", "seed_spread.csv", "samples_dagan_rn.png", "human.csv"):
        assert (out/f).stat().st_size > 0, f
    record = json.loads((out/"run.json").read_text())
    assert record["extra"]["fig5b"]["k"] == 8 and len(record["extra"]["fig5b"]["concepts"]) == 16
    stamps = {p.name: p.stat().st_mtime_ns for p in (out/"checkpoints").iterdir()}
    run("second.ipynb", seeds=[0])   # one seed: its checkpoints are loaded (a run's cost is its scoring, not its training)
    assert {p.name: p.stat().st_mtime_ns for p in (out/"checkpoints").iterdir()} == stamps   # loaded (the MAML critic too), not retrained
    timings = json.loads((out/"run.json").read_text())["extra"]["timings_s"]
    assert set(timings["parallel_train_s"].values()) == {0.0} and len(timings["parallel_train_s"]) == 4 + 1 + 1 + 1
    first = lambda t: t[t.seed == 0].reset_index(drop=True)
    pd.testing.assert_frame_equal(pd.read_csv(out/"results.csv"), first(results))   # the same samples, scored the same
    # distance_to_humans is z-scored over every row of the run, so it moves with the rows there are; the rest is the same
    pd.testing.assert_frame_equal(pd.read_csv(out/"summary.csv").drop(columns="distance_to_humans"),
                                  first(summary).drop(columns="distance_to_humans"))
    assert not list(out.rglob(".*.tmp")), "a temporary file was left behind"


def _assert_refused(tmp_path, notebook, cases):
    "Each (parameters, message) of `cases` stops `notebook` with an error that contains the message (one kernel for all: tests/refusals.py)."
    assert_refused(ROOT/"nbs"/notebook, cases, out_dir=str(tmp_path/"out"))


def test_exp_generation_refuses_bad_parameters(tmp_path):
    "Per-model epochs must cover every model, and every per-model dict must name models."
    _assert_refused(tmp_path, "exp_generation.ipynb", ((dict(epochs={"vae_ns": 2}), "epochs gives no number for"),
                                                       (dict(latent_sizes={"vae": [4]}), "latent_sizes has keys ['vae']"),
                                                       (dict(n_jobs=0), "parameter 'n_jobs' must be at least 1, got 0"),
                                                       (dict(maml_order="third"), "parameter 'maml_order' must be one of 'second', 'first', 'anil', got 'third'"),
                                                       (dict(maml_critic="no/such.pt"), "is not a file")))


def test_exp_beta_refuses_bad_parameters(tmp_path):
    "A model without a beta, a sample count the human point cannot match, or validation characters that are also trained on, stop the run with a clear error."
    _assert_refused(tmp_path, "exp_beta.ipynb", ((dict(model="dagan_un"), "parameter 'model' must be one of 'vae_ns', 'vae_stn', got 'dagan_un'"),
                                                 (dict(n_samples=10, epochs=None, steps=1), "n_samples must be 20"),
                                                 (dict(n_jobs=0), "parameter 'n_jobs' must be at least 1, got 0"),
                                                 (dict(critics=str(tmp_path)), "has no simclr.pt"),
                                                 (dict(n_val=-1), "parameter 'n_val' must be at least 0, got -1"),
                                                 (dict(sets="run_characters", n_samples=4, epochs=None, steps=1), "share alphabets with the training and test characters")))



USER_GENERATORS = """
import torch

def shifted_copy(prototypes, n):
    "Each sample: its prototype shifted by up to one pixel."
    shifts = torch.randint(-1, 2, (n, 2)).tolist()
    return torch.stack([torch.roll(prototypes, s, dims=(2, 3)) for s in shifts], 1)

def logits(prototypes, n):
    "Not a generator the critics can read: logits, not values in [0, 1]."
    return 8 * (prototypes.unsqueeze(1).expand(-1, n, -1, -1, -1) - 0.5)
"""


@pytest.fixture
def user_generators(tmp_path, monkeypatch):
    "A module of one's own generators in a folder put on PYTHONPATH, which the notebook's kernel inherits."
    folder = tmp_path/"mine"
    folder.mkdir()
    (folder/"my_generators.py").write_text(USER_GENERATORS)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH")) if p))
    return folder


def test_exp_generation_places_a_user_generator(tmp_path, user_generators):
    "A generator given by its import path is scored beside the models: its rows in summary.csv, results.csv, the plane's files."
    from fewshot_nb.generation.metrics import distance_to_humans
    out, path = tmp_path/"out", "my_generators:shifted_copy"
    params = dict(preset="smoke", models=["vae_ns"], context_sizes=[], maml_steps=0, n_jobs=1,
                  user_generators=[path], stored_runs=[], stored_controls=None, out_dir=str(out))   # smoke: 3 steps, 5 queries per class
    pm.execute_notebook(str(ROOT/"nbs"/"exp_generation.ipynb"), str(tmp_path/"user.ipynb"), parameters=params, cwd=str(ROOT),
                        kernel_name="python3", progress_bar=False)
    summary = pd.read_csv(out/"summary.csv")
    assert summary[["experiment", "model"]].values.tolist() == [["fig3a", "vae_ns"], ["user", path]]
    user, model = summary.iloc[1], summary.iloc[0]
    assert user.steps == 0 and user.n_classes == 24
    assert user.recognizability_frac > 0.8 > model.recognizability_frac   # a copy of the prototype is recognised; 3 steps of a VAE are not
    # its distance to humans is in the units of the models' points, which it leaves as they are
    human = pd.read_csv(out/"human.csv")[["diversity", "recognizability_frac"]].mean().to_numpy()
    pts = summary[["diversity", "recognizability_frac"]].to_numpy()
    assert abs(model.distance_to_humans - distance_to_humans(pts[:1], human)[0]) < 1e-6
    assert abs(user.distance_to_humans - distance_to_humans(pts[1:], human, reference=pts[:1])[0]) < 1e-6
    results = pd.read_csv(out/"results.csv")
    assert results[results.experiment == "user"].groupby("model").size().to_dict() == {path: 24}
    assert path in pd.read_csv(out/"class_distances.csv").columns                # Fig. 5b's table: a column per model, yours too
    for f in ("fig3a.png", "fig5a.png", "samples_user_my_generators_shifted_copy.png"):
        assert (out/f).stat().st_size > 0, f
    assert json.loads((out/"run.json").read_text())["params"]["user_generators"] == [path]


def test_user_generators_refused_before_any_work(tmp_path, user_generators):
    "A path that does not import, a missing attribute, or samples the critics cannot read stop the run before the bench is built."
    cases = ((dict(user_generators=["no_such_module:f"]), "put the folder that holds it on PYTHONPATH"),
             (dict(user_generators=["my_generators:shifted_cop"]), "its public callables: logits, shifted_copy"),
             (dict(user_generators=["my_generators:logits"]), "outside [0, 1]"),
             (dict(user_generators=["my_generators:shifted_copy"] * 2), "(repeated:"))
    _assert_refused(tmp_path, "exp_generation.ipynb", cases)
    _assert_refused(tmp_path, "exp_beta.ipynb", cases[2:3])
    assert not (tmp_path/"out"/"human.csv").exists()                              # stopped before the bench


def test_exp_beta_places_a_user_generator(tmp_path, user_generators):
    "exp_beta draws a user generator beside its betas and writes its point."
    out, path = tmp_path/"out", "my_generators:shifted_copy"
    params = dict(preset="smoke", betas=[1.0], n_jobs=1, long_run=None, user_generators=[path], out_dir=str(out))   # smoke: 4 steps, 5 queries per class
    pm.execute_notebook(str(ROOT/"nbs"/"exp_beta.ipynb"), str(tmp_path/"user.ipynb"), parameters=params, cwd=str(ROOT),
                        kernel_name="python3", progress_bar=False)
    points = pd.read_csv(out/"user_generators.csv")
    assert points.model.tolist() == [path] and points.recognizability_frac.iloc[0] > 0.8
    assert len(pd.read_csv(out/"user_results.csv")) == 24 and set(pd.read_csv(out/"summary.csv").beta) == {1.0}
    assert (out/"samples_user_my_generators_shifted_copy.png").stat().st_size > 0

# --- parameters are checked before any work (fewshot_nb.params.check_parameters) ---
PAPERMILL = str(Path(sys.executable).parent/"papermill")   # the venv's papermill, whose python3 kernel is the venv
EXP_NOTEBOOKS = sorted(p.name for p in (ROOT/"nbs").glob("exp_*.ipynb"))


def _lake_runs(tmp_path, **params):
    return pm.execute_notebook(str(ROOT/"nbs"/"exp_lake_runs.ipynb"), str(tmp_path/"executed.ipynb"),
                               parameters=dict(out_dir=str(tmp_path/"out"), **params), cwd=str(ROOT),
                               kernel_name="python3", progress_bar=False)


def test_unknown_parameter_is_refused(tmp_path):
    "papermill only warns about a name the notebook does not declare; the notebook stops on it, naming it, before any work."
    with pytest.raises(pm.PapermillExecutionError) as e:
        _lake_runs(tmp_path, no_such=1)
    assert "unknown parameter 'no_such'" in str(e.value) and "this notebook accepts" in str(e.value), e.value
    assert not (tmp_path/"out").exists()                      # stopped before the output folder was made


def test_unknown_parameter_cli_exits_nonzero(tmp_path):
    "The command line form: `papermill nbs/exp_lake_runs.ipynb OUT -p no_such 1` exits non-zero with the message."
    r = subprocess.run([PAPERMILL, "nbs/exp_lake_runs.ipynb", str(tmp_path/"executed.ipynb"), "-p", "no_such", "1",
                        "-p", "out_dir", str(tmp_path/"out"), "-k", "python3", "--cwd", str(ROOT), "--no-progress-bar"],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode != 0, r.stdout + r.stderr
    assert "unknown parameter 'no_such'" in r.stdout + r.stderr, r.stderr   # the notebook's error, not papermill's warning
    assert not (tmp_path/"out").exists()


def test_list_parameter_as_comma_string_is_refused(tmp_path):
    "`-p baselines pixel_nn,mhd` is refused with the way to write a list; the other bad values are reported with it."
    with pytest.raises(pm.PapermillExecutionError) as e:
        _lake_runs(tmp_path, baselines="pixel_nn,mhd", n_tasks=True)
    msg = str(e.value)
    assert "parameter 'baselines' must be list[str], got 'pixel_nn,mhd'" in msg and "YAML" in msg and "-y" in msg, msg
    assert "parameter 'n_tasks' must be int, got True" in msg, msg
    assert not (tmp_path/"out").exists()


def _declared(nb_path):
    "Names the parameters cell assigns, and whether each is annotated."
    nb = json.loads(nb_path.read_text())
    src = "".join(next(c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", []))["source"])
    out = {}
    for node in ast.parse(src).body:
        if isinstance(node, ast.AnnAssign): out[node.target.id] = True
        elif isinstance(node, ast.Assign): out.update({n.id: False for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)})
    return out


@pytest.mark.parametrize("name", EXP_NOTEBOOKS)
def test_help_notebook_types_every_parameter(name):
    "`papermill --help-notebook` lists every parameter of the parameters cell with its type (and its help comment)."
    r = subprocess.run([PAPERMILL, "--help-notebook", f"nbs/{name}"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    listed = dict(re.findall(r"^  (\w+): (.+?) \(default ", r.stdout, flags=re.M))
    declared = _declared(ROOT/"nbs"/name)
    assert declared and all(declared.values()), {k for k, v in declared.items() if not v}   # every one annotated
    assert list(listed) == list(declared), (listed, declared)                                # none left out of the help
    assert "Unknown type" not in listed.values(), listed


def _papermill_log(tmp_path, name, **env):
    "stderr of `papermill --log-output` running exp_training_run's smoke preset (27 training steps) with `env` set."
    out = tmp_path/name
    r = subprocess.run([sys.executable, "-m", "papermill", str(ROOT/"nbs"/"exp_training_run.ipynb"), str(out.with_suffix(".ipynb")),
                        "--log-output", "-p", "preset", "smoke", "-p", "out_dir", str(out)],
                       cwd=ROOT, capture_output=True, text=True, timeout=300, env={**os.environ, "FEWSHOT_LOG": "INFO", **env})
    assert r.returncode == 0, r.stderr[-3000:]
    assert (out/"results.csv").stat().st_size > 0
    return r.stderr


def test_progress_shows_in_papermill_log_output_unless_silenced(tmp_path):
    "Under `papermill --log-output`, an experiment's training loop prints progress lines on stderr; FEWSHOT_PROGRESS=0 silences them."
    log = _papermill_log(tmp_path, "on", FEWSHOT_PROGRESS="1", FEWSHOT_PROGRESS_INTERVAL="0.2")
    bars = [l.strip("\r") for l in re.split(r"[\r\n]+", log) if l.startswith("ProtoNetTraining:")]
    assert bars and bars[-1].startswith("ProtoNetTraining: 100%") and "27/27" in bars[-1] and "step/s" in bars[-1], log[-3000:]
    assert "INFO fewshot_nb: experiment setup: 1 torch thread(s), progress on" in log   # OMP_NUM_THREADS=1 (conftest) is kept
    assert "loaded from the cache" in log or "decoded from" in log                        # where the images came from
    quiet = _papermill_log(tmp_path, "off", FEWSHOT_PROGRESS="0")
    assert "ProtoNetTraining" not in quiet and "step/s" not in quiet and "it/s" not in quiet, quiet[-3000:]
    assert "progress off" in quiet
