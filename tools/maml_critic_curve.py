"""Learning curve of the MAML critic (Boutin et al. 2022, S6) on the weak split at 50 px.

Trains `fewshot_nb.generation.critics.maml_critic` with a `Trainer`, as `train_maml_critic` does, and writes after
every validation a CSV row: step, seconds, training loss, and the 20-way 1-shot accuracy (10 inner steps) on 50
fixed tasks of the 24 test classes of the minimal sets (accuracies as fractions: train_acc_frac, val_acc_frac and the
half-width val_ci_frac). Resumable: run the same command again.

    FEWSHOT_DATA=../shared/data OMP_NUM_THREADS=1 python tools/maml_critic_curve.py --order anil --steps 3000 \
        --out runs/maml_critic/anil_curve.csv --checkpoint runs/maml_critic/anil.ckpt \
        [--until 300 --save runs/maml_critic/anil_best.pt --best]
"""
import argparse, json, time
from pathlib import Path
import pandas as pd, torch
from fewshot_nb.core import save_csv
from fewshot_nb.data.omniglot import load_omniglot
from fewshot_nb.data.splits import weak_split
from fewshot_nb.data.samplers import EpisodeSampler
from fewshot_nb.generation.critics import maml_critic, critic_input, save_maml_critic
from fewshot_nb.training.trainer import TrainData, EpisodeStream, Trainer

p = argparse.ArgumentParser()
p.add_argument("--order", default="second"); p.add_argument("--steps", type=int, default=2000)
p.add_argument("--n-query", type=int, default=5); p.add_argument("--n-tasks", type=int, default=4)
p.add_argument("--inner-lr", type=float, default=1e-2); p.add_argument("--lr", type=float, default=1e-3)
p.add_argument("--val-every", type=int, default=100); p.add_argument("--val-tasks", type=int, default=50)
p.add_argument("--threads", type=int, default=1); p.add_argument("--seed", type=int, default=0)
p.add_argument("--out", required=True); p.add_argument("--checkpoint", required=True)
p.add_argument("--save", help="write the critic there (save_maml_critic) when done: its last weights, or with --best its best validated ones")
p.add_argument("--best", action="store_true", help="save the best validated weights instead of the last")
p.add_argument("--until", type=int, help="stop at this step (default: --steps); run again with a larger one to go on")
a = p.parse_args()
torch.set_num_threads(a.threads)
omni = load_omniglot(size=50, resample="bilinear")
split = weak_split(omni)
test = omni.subset(split["test"])
td = TrainData.from_omniglot(omni, split["train"])
torch.manual_seed(a.seed)
method = maml_critic(a.order, 20, 5, 10, a.inner_lr)
source = EpisodeStream(td, n_way=20, n_shot=1, n_query=a.n_query, n_tasks=a.n_tasks, binarize=0.5)
val = EpisodeSampler(test.labels, 20, 1, 1).sample_batch(a.val_tasks, seed=0)
t = Trainer(method, source, n_steps=a.steps, lr=a.lr, seed=a.seed, checkpoint=a.checkpoint, optimizer="adam",
            val_images=critic_input(test.images), val_tasks=val, val_every=a.val_every, progress=False)
out = Path(a.out); rows = pd.read_csv(out).to_dict("records") if out.exists() else []
until = min(a.until or a.steps, a.steps)
while t.step < until:
    t0 = time.time(); hist = t.fit(until=min(t.step + a.val_every, until))
    last = hist.dropna(subset=[c for c in hist.columns if c.startswith("val")][:1]).iloc[-1]
    frac = {"train_acc": "train_acc_frac", "val_acc": "val_acc_frac", "val_ci": "val_ci_frac"}   # the unit in the name, for save_csv (a rate, images_per_s, is left out)
    row = dict(step=t.step, seconds=round(time.time() - t0, 1), order=a.order, n_query=a.n_query, inner_lr=a.inner_lr,
               **{frac.get(k, k): float(v) for k, v in last.items() if k not in ("step", "images_per_s") and isinstance(v, (int, float))})
    rows.append(row); print(json.dumps(row), flush=True)
    save_csv(pd.DataFrame(rows), out)
if a.save: save_maml_critic((t.load_best() if a.best else t.method).eval(), a.save)
