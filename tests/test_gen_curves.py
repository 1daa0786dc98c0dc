"""tools/gen_curves.py: a learning curve of a generative model, scored on the generation bench, resumable and extendable."""
import importlib.util, sys
from pathlib import Path
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parent.parent
from tools_loader import load_tool
gc = load_tool("gen_curves")


def test_curve_is_written_resumed_and_extended(tmp_path):
    out = tmp_path/"ns.csv"
    args = ["--model", "vae_ns", "--beta", "1", "--n-per-class", "20", "--horizon", "1", "--out", str(out)]
    gc.main(args + ["--at", "0.2", "0.4"])
    first = pd.read_csv(out)
    assert list(first.epoch) == [0.2, 0.4] and list(first.step) == [5, 11]   # 27 steps an epoch (32 sets of 5 images)
    assert first.recognizability_frac.between(0, 1).all() and (first.diversity > 0).all() and first.nll.notna().all()
    assert out.with_suffix(".pt").exists()
    gc.main(args + ["--at", "0.2", "0.4", "0.6"])   # the same horizon: resumes from the checkpoint, scores only the new point
    ext = pd.read_csv(out)
    assert list(ext.step) == [5, 11, 16]
    pd.testing.assert_frame_equal(ext.iloc[:2], first)
    gc.main(["--plot", str(tmp_path)])
    assert (tmp_path/"curves.png").stat().st_size > 1000
    from PIL import Image
    one_family = Image.open(tmp_path/"curves.png").size
    (tmp_path/"stn_copy.csv").write_bytes(out.read_bytes())   # a second model family: a second row of panels
    gc.main(["--plot", str(tmp_path)])
    two_families = Image.open(tmp_path/"curves.png")
    assert two_families.size[0] == one_family[0] and two_families.size[1] == 2 * one_family[1]
    assert two_families.mode == "P"   # stored with a palette


def test_curve_scores_validation_characters(tmp_path, capsys):
    "--validation N: each point also scored on characters of other alphabets (Lake's runs), where a recipe can be chosen."
    out = tmp_path/"ns_val.csv"
    gc.main(["--model", "vae_ns", "--beta", "1", "--n-per-class", "20", "--validation", "10", "--at", "0.2", "--out", str(out)])
    row = pd.read_csv(out).iloc[0]
    assert 0 <= row.recognizability_val_frac <= 1 and row.diversity_val > 0 and row.recognizability_val_hw_frac > 0
    assert row.recognizability_val_frac != row.recognizability_frac and row.diversity_val != row.diversity   # other characters
    with pytest.raises(SystemExit): gc.main(["--model", "vae_ns", "--validation", "-1", "--at", "0.2", "--out", str(tmp_path/"x.csv")])
    assert "--validation must be 0" in capsys.readouterr().err


def test_select_chooses_on_validation_only(tmp_path):
    "--select: per model and beta, the curve whose last point is most recognizable on validation, whatever the test characters say."
    cols = dict(diversity=1.0, diversity_hw=0.1, recognizability_hw_frac=0.05, recognizability_val_hw_frac=0.04, diversity_val=1.0, diversity_val_hw=0.1)
    def curve(name, model, beta, val, test, early_val=0.9):   # two points; the first (not the budget's) is the best on validation
        pd.DataFrame([dict(model=model, beta=beta, epoch=e, recognizability_val_frac=v, recognizability_frac=test, **cols)
                      for e, v in ((50, early_val), (100, val))]).to_csv(tmp_path/name, index=False)
    curve("a.csv", "vae_ns", 3.0, 0.40, 0.50); curve("b.csv", "vae_ns", 3.0, 0.35, 0.60); curve("c.csv", "vae_ns", 5.0, 0.30, 0.55)
    out = tmp_path/"selection.csv"
    gc.main(["--select", *(str(tmp_path/f) for f in ("a.csv", "b.csv", "c.csv")), "--select-out", str(out)])
    t = pd.read_csv(out).set_index("curve")
    assert t.chosen.to_dict() == {"a.csv": True, "b.csv": False, "c.csv": True}   # b is better on test, a on validation; c alone
    assert (t.epoch == 100).all() and t.loc["a.csv", "recognizability_frac"] == 0.50
    pd.DataFrame([dict(model="vae_ns", beta=3.0, epoch=1, recognizability_frac=0.5)]).to_csv(tmp_path/"old.csv", index=False)
    with pytest.raises(SystemExit, match="not scored on validation"): gc.main(["--select", str(tmp_path/"old.csv"), "--select-out", str(out)])


def test_curve_needs_points_and_output(tmp_path, capsys):
    with pytest.raises(SystemExit): gc.main(["--model", "vae_ns", "--out", str(tmp_path/"x.csv")])
    assert "--at and --out" in capsys.readouterr().err
    with pytest.raises(SystemExit): gc.main(["--plot", str(tmp_path)])   # an empty folder: nothing to plot


def test_distorted_pairs_distort_the_conditioning_images_too():
    "With --distort a pair model's conditioning images get their own distortion, as its targets do."
    import torch
    from fewshot_nb.data.augment import Distorted
    class Pairs:
        kind = "pair"
        def batch(self, step, seed):
            g = torch.Generator().manual_seed(step)
            return dict(x=torch.rand(4, 1, 28, 28, generator=g), cond=torch.rand(4, 1, 28, 28, generator=g))
        def config(self): return {}
    raw, out = Pairs().batch(0, 0), Distorted(Pairs()).batch(0, 0)
    assert not torch.equal(out["cond"], raw["cond"]) and not torch.equal(out["x"], raw["x"])
    assert torch.equal(Distorted(Pairs()).batch(0, 0)["cond"], out["cond"])   # reproducible from (seed, step)


def test_training_subset_is_nested_and_checked():
    "--train-classes: a seeded subset of the training characters, all their images, smaller subsets inside larger ones."
    import torch
    from fewshot_nb.data.streams import ImageSource
    y = torch.arange(10).repeat_interleave(3)
    train = ImageSource(torch.rand(30, 1, 8, 8), y * 7, groups=y // 5)   # ids need not be 0..n-1
    small, large = gc.training_subset(train, 3), gc.training_subset(train, 6)
    assert (small.n_classes, len(small), large.n_classes, len(large)) == (3, 9, 6, 18)
    as_set = lambda t: {tuple(v.flatten().tolist()) for v in t.x}
    assert as_set(small) < as_set(large)
    assert torch.equal(gc.training_subset(train, 6).x, large.x)   # the same seed, the same subset
    assert gc.training_subset(train, 10).n_classes == 10 and len(gc.training_subset(train, 10)) == 30
    for bad in (0, 11):
        with pytest.raises(ValueError, match="between 1 and the bench's 10 training characters"): gc.training_subset(train, bad)


def test_train_classes_with_rotations_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit):
        gc.main(["--model", "vae_ns", "--rotations", "--train-classes", "50", "--n-per-class", "20", "--at", "0.1", "--out", str(tmp_path/"x.csv")])
    assert "--train-classes and --rotations" in capsys.readouterr().err


def test_stored_schedule_choice():
    """nbs/results/gen_curves_val: its selection.csv is what its curves give, and exp_generation's recipes (the models' own:
    a constant rate for the VAE-NS, reduce on plateau for the VAE-STN, the small DA-GANs' learning rate of 1e-3) are what
    validation chose."""
    from fewshot_nb.generation.base import training_recipe
    folder = ROOT/"nbs"/"results"/"gen_curves_val"
    stored = pd.read_csv(folder/"selection.csv")
    pd.testing.assert_frame_equal(gc.select_on_validation([folder/c for c in stored.curve]), stored, check_dtype=False)
    chosen = set(stored.curve[stored.chosen])
    assert training_recipe("vae_ns", "small").get("schedule") is None and {"ns_b3_constant.csv", "ns_b5_constant.csv"} <= chosen
    assert training_recipe("vae_stn", "small")["schedule"] == "plateau" and "stn_b3_plateau.csv" in chosen
    for m in ("dagan_un", "dagan_rn"):   # the small DA-GANs' learning rate, chosen against the paper's 1e-4
        assert training_recipe(m, "small")["lr"] == 1e-3 and f"{m}_lr1e-3.csv" in chosen and f"{m}_lr1e-4.csv" not in chosen


def test_stored_runs_train_what_validation_chose():
    """The stored default runs of exp_beta and exp_generation train what validation characters chose: exp_beta at the
    models' recipes (schedule None), exp_generation's VAEs at the betas exp_beta's runs choose on validation, as their
    run.json records them (extra.selected); a run re-made with a test-chosen beta or schedule fails here."""
    import json
    beta = json.loads((ROOT/"nbs"/"runs"/"exp_beta"/"run.json").read_text())
    assert beta["params"]["schedule"] is None and beta["extra"]["selected"]["schedule"]["value"] == "the model's recipe"
    gen = json.loads((ROOT/"nbs"/"runs"/"exp_generation"/"run.json").read_text())
    for m, by in (("vae_ns", "nbs/runs/exp_beta"), ("vae_stn", "nbs/results/exp_beta_vae_stn")):
        sel = pd.read_csv(ROOT/by/"selection.csv")
        chosen = float(sel[(sel.part == "validation") & sel.chosen].beta.iloc[0])
        assert gen["params"]["model_kwargs"][m]["beta"] == chosen == gen["extra"]["selected"][m]["validation_beta"], (m, chosen)
        assert gen["extra"]["selected"][m]["by"] == f"{by}/selection.csv"


def test_select_on_validation_groups_models_without_beta(tmp_path):
    "Curves of a model without beta (the DA-GANs: an empty beta column) are one group: the one most recognizable on validation is chosen."
    for name, val in (("un_a.csv", 0.30), ("un_b.csv", 0.25), ("rn_a.csv", 0.10)):
        pd.DataFrame(dict(model=["dagan_un" if name.startswith("un") else "dagan_rn"] * 2, beta=[None, None], epoch=[10.0, 30.0],
                          recognizability_val_frac=[0.0, val], recognizability_val_hw_frac=0.05, recognizability_frac=0.5,
                          recognizability_hw_frac=0.1)).to_csv(tmp_path/name, index=False)
    t = gc.select_on_validation(sorted(tmp_path.glob("*.csv"))).set_index("curve")
    assert t.chosen.to_dict() == {"rn_a.csv": True, "un_a.csv": True, "un_b.csv": False}
