"""Learning curves of a one-shot generative model on the generation bench: diversity and recognizability every few epochs.

Trains one model of `fewshot_nb.bench.generation.GENERATORS` on the bench's training characters and, at each
epoch listed in `--at`, draws 20 samples from the prototype of every test class and scores them with the released
critics (the bench's fixed recognizability tasks); with `--validation N`, also on validation characters of other
alphabets, on which a recipe can be chosen without looking at the test characters. One CSV row per evaluation (epoch, step, training seconds, loss,
diversity and recognizability with their 95% half-widths over classes; recognizability as a fraction in
[0, 1]: recognizability_frac, recognizability_hw_frac); the model is checkpointed at each evaluation,
so an interrupted run resumes where it stopped.

    FEWSHOT_DATA=../shared/data python tools/gen_curves.py --model vae_ns --beta 1 --at 5 10 20 40 --out runs/gen_curves/ns_b1.csv
    python tools/gen_curves.py --plot runs/gen_curves   # one figure of every CSV there: runs/gen_curves/curves.png
    python tools/gen_curves.py --select runs/val/*.csv --select-out runs/val/selection.csv   # curves made with --validation N
"""
from __future__ import annotations
import argparse, importlib.util, io, json
from pathlib import Path
import pandas as pd, torch

from fewshot_nb.core import seed_everything
from fewshot_nb.bench.generation import GenerationBench, summarise_scores, schedule_callbacks, score_generator
from fewshot_nb.generation.base import make_generator, training_recipe
from fewshot_nb.data.augment import Distorted
from fewshot_nb.data.streams import ImageSource
from fewshot_nb.training.trainer import Trainer, Optimizer, Evaluate, Checkpoint


FAMILIES = {"ns": "VAE-NS", "stn": "VAE-STN", "dagan": "DA-GAN"}   # file-name prefix -> the row of the figure


def plot(folder:Path):
    "Recognizability and diversity against optimiser steps, one line per CSV of `folder`, a row per model family (file-name prefix), written to `folder/curves.png`."
    import matplotlib, matplotlib.ticker; matplotlib.use("Agg"); import matplotlib.pyplot as plt
    from fewshot_nb.core import atomic_write
    files = sorted(folder.glob("*.csv"))
    if not files: raise SystemExit(f"no CSV in {folder}")
    groups = {}
    for f in files: groups.setdefault(f.stem.split("_")[0], []).append(f)
    order = list(FAMILIES)
    groups = dict(sorted(groups.items(), key=lambda kv: (order.index(kv[0]) if kv[0] in order else len(order), kv[0])))
    fig, axes = plt.subplots(len(groups), 2, figsize=(12, 3.9 * len(groups)), dpi=100, squeeze=False)
    for (prefix, group), row in zip(groups.items(), axes):
        for i, f in enumerate(group):
            d = pd.read_csv(f)
            style = dict(color=plt.cm.tab10(i % 10), ls=["-", "--", ":"][i // 10 % 3], marker="o", ms=3, label=f.stem)
            row[0].plot(d.step, 100 * d.recognizability_frac, **style); row[1].plot(d.step, d.diversity, **style)
        name = FAMILIES.get(prefix, prefix)
        row[0].set_ylabel(f"{name}: recognizability (%)"); row[1].set_ylabel(f"{name}: diversity (Eq. 2)")
        row[1].legend(fontsize=9, loc="center left", bbox_to_anchor=(1.02, 0.5), ncol=1 + len(group) // 12)
    for ax in axes.flat:
        ax.set_xlabel("optimiser steps"); ax.set_xscale("log"); ax.tick_params(labelsize=9)
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    plt.tight_layout()
    buf = io.BytesIO(); fig.savefig(buf, format="png"); plt.close(fig)
    spec = importlib.util.spec_from_file_location("run_notebooks", Path(__file__).with_name("run_notebooks.py"))
    run_notebooks = importlib.util.module_from_spec(spec); spec.loader.exec_module(run_notebooks)
    with atomic_write(folder / "curves.png") as tmp:   # with a palette, as the notebooks' stored figures: a third of the bytes
        Path(tmp).write_bytes(run_notebooks.palette_png(buf.getvalue()))
    print(folder / "curves.png")


def select_on_validation(paths) -> pd.DataFrame:
    """The last point of each curve (its budget's epochs), grouped by model and beta: in each group the curve most recognizable
    on the validation characters (`--validation`) is `chosen`; the test characters' scores are beside it, never used."""
    rows = []
    for p in map(Path, paths):
        d = pd.read_csv(p)
        if "recognizability_val_frac" not in d: raise SystemExit(f"{p} was not scored on validation characters: make it with --validation N")
        last = d.iloc[-1]
        rows.append(dict(curve=p.name, model=last.model, beta=last.beta, epoch=last.epoch, recognizability_val_frac=last.recognizability_val_frac,
                         recognizability_val_hw_frac=last.recognizability_val_hw_frac, recognizability_frac=last.recognizability_frac,
                         recognizability_hw_frac=last.recognizability_hw_frac))
    t = pd.DataFrame(rows)
    best = t.groupby(["model", "beta"], dropna=False).recognizability_val_frac.transform("max")   # a model without beta (the DA-GANs) is one group
    t["chosen"] = t.recognizability_val_frac.eq(best)
    return t


def training_subset(train:ImageSource, n_classes:int, seed:int=0) -> ImageSource:
    "The images of `n_classes` of `train`'s classes, drawn by a permutation fixed by `seed`: subsets of one seed are nested."
    if not 1 <= n_classes <= train.n_classes:
        raise ValueError(f"--train-classes must be between 1 and the bench's {train.n_classes} training characters, got {n_classes}")
    keep = torch.randperm(train.n_classes, generator=torch.Generator().manual_seed(seed))[:n_classes]
    mask = torch.isin(train.labels, keep)
    return ImageSource(train.x[mask], train.labels[mask], train.groups[mask])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--plot", type=Path, default=None, help="only plot the CSVs of this folder")
    ap.add_argument("--select", type=Path, nargs="+", default=None, help="only choose among these curves (made with --validation) on the "
                    "validation characters, per model and beta, at each curve's last point; the table goes to --select-out")
    ap.add_argument("--select-out", type=Path, default=None)
    ap.add_argument("--model", default="vae_ns")
    ap.add_argument("--preset", default="small", choices=["small", "paper"])
    ap.add_argument("--beta", type=float, default=None, help="beta of the VAE-like models")
    ap.add_argument("--kwargs", default="{}", help="other constructor arguments, as JSON")
    ap.add_argument("--at", type=float, nargs="+", help="epochs at which to evaluate")
    ap.add_argument("--horizon", type=float, default=None, help="epochs the trainer is configured for (default: the last of --at); "
                    "runs with the same horizon resume each other's checkpoint, so a curve can be extended")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=None)
    ap.add_argument("--schedule", default=None, choices=["none", "cosine", "plateau"],
                    help="learning-rate schedule (default: the model's recipe, e.g. 'plateau' for the VAE-STN); cosine runs to --horizon")
    ap.add_argument("--image-size", type=int, default=28)
    ap.add_argument("--rotations", action="store_true", help="the 90/180/270-degree rotations as new training classes")
    ap.add_argument("--distort", type=float, default=0.0, help="random affine distortion of the training images: max degrees (shift scales with it); "
                    "every image of a batch gets its own distortion, the conditioning images of pair models included")
    ap.add_argument("--train-classes", type=int, default=None,
                    help="train on this many of the bench's training characters (a seeded subset, nested: a smaller one is inside a larger one)")
    ap.add_argument("--n-per-class", type=int, default=500)
    ap.add_argument("--validation", type=int, default=0, metavar="N",
                    help="also score every point on validation characters, on which a recipe may be chosen: characters 01 to N of each "
                         "alphabet of Lake's runs (other alphabets than the test's; 65 characters at N = 10), in columns *_val*; 0: none")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    if a.plot is not None: return plot(a.plot)
    if a.select is not None:
        if a.select_out is None: ap.error("--select needs --select-out")
        from fewshot_nb.core import save_csv
        t = select_on_validation(a.select); save_csv(t, a.select_out, units={"chosen": "whether validation chose this curve (bool)"})
        return print(t.to_string(index=False))
    if not a.at or not a.out: ap.error("--at and --out are needed to train (or give --plot FOLDER)")

    seed_everything(a.seed)
    bench = GenerationBench(image_size=a.image_size, n_per_class=a.n_per_class, seed=0, rotations=a.rotations)
    if a.validation < 0: ap.error(f"--validation must be 0 (none) or a number of characters per alphabet, got {a.validation}")
    val_bench = bench.validation_bench(a.validation) if a.validation else None
    if a.train_classes is not None:
        if a.rotations: ap.error("--train-classes and --rotations together are not supported: subset the characters or rotate them")
        try: bench.train = training_subset(bench.train, a.train_classes)
        except ValueError as e: ap.error(str(e))
    kw = json.loads(a.kwargs) | ({} if a.beta is None else dict(beta=a.beta))
    torch.manual_seed(a.seed)
    m = make_generator(a.model, a.preset, image_size=a.image_size, **kw)
    src = m.batches(bench.train, a.batch_size)
    if a.distort: src = Distorted(src, degrees=a.distort, translate=(a.distort / 5, a.distort / 5), scale=(0.9, 1.1))
    per_epoch = m.epoch_steps(src)   # a GAN's epoch: a pass of the data through its discriminator (`DAGAN.epoch_steps`)
    stops = [max(1, int(round(e * per_epoch))) for e in a.at]
    recipe = training_recipe(a.model, a.preset) | ({} if a.lr is None else dict(lr=a.lr))
    sched = recipe.pop("schedule", None)
    if a.schedule is not None: sched = None if a.schedule == "none" else a.schedule
    sched_cbs = schedule_callbacks(m, src, sched, recipe.pop("lr_patience", 10))   # 'plateau': a window is an epoch
    ck = Path(a.out).with_suffix(".pt")
    horizon = max(stops[-1], int(round((a.horizon or 0) * per_epoch)))
    epoch_at = dict(zip(stops, a.at))

    def evaluate(t:Trainer) -> dict:
        "The trainer's evaluation hook: recognizability and diversity of the samples on the bench, with the training losses since the last point."
        pt = summarise_scores(score_generator(bench, m)["scores"])
        last = {k: v for k, v in t.history[-1].items() if k not in ("step", "train_acc", "lr", "images_per_s")}   # means since the last row
        row = dict(model=a.model, beta=a.beta, n_train_classes=bench.train.n_classes, epoch=epoch_at[t.step],
                   diversity=pt["diversity"], diversity_hw=pt["diversity_hw"],
                   recognizability_frac=pt["recognizability_frac"], recognizability_hw_frac=pt["recognizability_hw_frac"], **last)
        if val_bench is not None:   # the same model shown the validation characters' prototypes
            pv = summarise_scores(score_generator(val_bench, m)["scores"])
            row |= dict(diversity_val=pv["diversity"], diversity_val_hw=pv["diversity_hw"], recognizability_val_frac=pv["recognizability_frac"],
                        recognizability_val_hw_frac=pv["recognizability_hw_frac"])
        print({"step": t.step, **row}, flush=True)
        return row

    # evaluated at the steps of --at; the rows live in the checkpoint and in --out, so a run resumed or extended with
    # more points (the same --horizon) scores only the new ones
    opt = Optimizer("adam", betas=recipe.pop("betas", None), grad_clip=recipe.pop("grad_clip", None))
    tr = Trainer(m, src, horizon, lr=recipe.pop("lr", 1e-3), optimizer=opt, seed=a.seed, device="cpu", progress=False,
                 callbacks=[*sched_cbs, Evaluate(evaluate, at=stops, csv=a.out), Checkpoint(ck)])
    if recipe: raise ValueError(f"training_recipe({a.model!r}) has settings this tool does not pass on: {sorted(recipe)}")
    n_params = sum(p.numel() for p in m.parameters())
    print(f"{a.model} ({n_params / 1e6:.2f} M parameters), {per_epoch} steps per epoch, evaluating at steps {stops}", flush=True)
    tr.fit(until=stops[-1])

if __name__ == "__main__":
    main()
