"""Learning curve of the MAML critic (Boutin et al. 2022, S6) on the weak split at 50 px.

Trains `fewshot_nb.generation.critics.maml_critic` with a `Trainer`, as `train_maml_critic` does, and writes after
every validation a CSV row (the trainer's evaluation hook): step, training seconds, training loss, and the 20-way 1-shot accuracy (10 inner steps) on 50
fixed tasks of the 24 test classes of the minimal sets (accuracies as fractions: train_acc_frac, val_acc_frac and the
half-width val_ci_frac). Resumable: run the same command again.

    FEWSHOT_DATA=../shared/data OMP_NUM_THREADS=1 python tools/maml_critic_curve.py --order anil --steps 3000 \
        --out runs/maml_critic/anil_curve.csv --checkpoint runs/maml_critic/anil.ckpt \
        [--until 300 --save runs/maml_critic/anil_best.pt --best]
"""
import argparse, json
import torch
from fewshot_nb.data.omniglot import load_omniglot
from fewshot_nb.data.splits import weak_split
from fewshot_nb.data.samplers import EpisodeSampler
from fewshot_nb.generation.critics import maml_critic, critic_input, save_maml_critic
from fewshot_nb.data.streams import ImageSource, EpisodeStream
from fewshot_nb.training.trainer import Trainer, Validate, Evaluate, Checkpoint

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
td = ImageSource.from_omniglot(omni, split["train"])
torch.manual_seed(a.seed)
method = maml_critic(a.order, 20, 5, 10, a.inner_lr)
source = EpisodeStream(td, n_way=20, n_shot=1, n_query=a.n_query, n_tasks=a.n_tasks, binarize=0.5)
val = EpisodeSampler(test.labels, 20, 1, 1).sample_batch(a.val_tasks, seed=0)
def curve_row(t:Trainer) -> dict:
    "The trainer's evaluation hook: the validation just made (the history's last row), with the run's settings and units in the names."
    last = t.history[-1]
    row = dict(order=a.order, n_query=a.n_query, inner_lr=a.inner_lr, loss=last["loss"], lr=last["lr"],
               train_acc_frac=last["train_acc"], val_acc_frac=last["val_acc"], val_ci_frac=last["val_ci"])
    print(json.dumps({"step": t.step, **row}), flush=True)
    return row

t = Trainer(method, source, a.steps, lr=a.lr, optimizer="adam", seed=a.seed, progress=False,
            callbacks=[Validate(critic_input(test.images), val, every=a.val_every), Evaluate(curve_row, every=a.val_every, csv=a.out),
                       *([Checkpoint(a.checkpoint)] if a.checkpoint else [])])   # a CSV row after every validation, resumed with the checkpoint
t.fit(until=min(a.until or a.steps, a.steps))
if a.save: save_maml_critic((t.load_best() if a.best else t.method).eval(), a.save)
