"""Boutin et al. (2022), S17 and Fig. S21: a standard classifier overfits Omniglot's 18 drawings a class, a one-shot
classifier does not.

Two networks with the critics' body (Table S1, `fewshot_nb.generation.critics.critic_embedding`, 50 px binary inputs):

- **the standard classifier**: the body and Linear(256, n_classes) over every class of the sets loaded (242 in the
  minimal sets, 1,623 in the paper), trained by cross-entropy on 18 drawings of each class and tested on the other 2
  (drawn per class with the seed);
- **the one-shot classifier**: the body and the ProtoNet critic's Linear(256, 128), trained on 20-way 1-shot episodes
  of the weak split's training classes (S1) and tested on episodes of its 24 test classes.

After every epoch (and before the first: epoch 0) both are evaluated in eval mode: the classifier's cross-entropy on
each training and each test drawing, the ProtoNet's episode loss on fixed episodes of training and of test classes
(the images they use embedded once per evaluation). It writes, atomically, to `--out`:

- `losses.csv`: model, epoch, split (train | test), the mean loss (`loss_nats`) and accuracy (`acc_frac`);
- `test_losses.csv.gz`: model, epoch, item (a test drawing, or a test episode) and its loss (`loss_nats`), for the
  paired statistic of `exp_generation`'s findings (claim `bg.s17.classifier_overfits`);
- `run.json`: the arguments, the classes and drawings, the versions and the timings.

    FEWSHOT_DATA=../shared/data python tools/s17_overfit.py --out nbs/results/exp_generation_s17 [--epochs 30]
"""
import argparse, json, platform, time
from dataclasses import fields, replace
from pathlib import Path
import numpy as np, pandas as pd, torch
import torch.nn.functional as F
from torch import nn
from fewshot_nb.core import atomic_write, save_csv, check_units
from fewshot_nb.data.omniglot import load_omniglot
from fewshot_nb.data.splits import weak_split
from fewshot_nb.data.samplers import EpisodeSampler
from fewshot_nb.generation.critics import Critic, critic_embedding, critic_input

p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
p.add_argument("--out", required=True, help="folder of the outputs")
p.add_argument("--epochs", type=int, default=30, help="epochs of each network (the classifier: passes over its 18 drawings a class)")
p.add_argument("--episodes", type=int, default=60, help="the ProtoNet's training episodes per epoch (20-way 1-shot, 5 queries a class)")
p.add_argument("--eval-tasks", type=int, default=200, help="fixed episodes of training classes and of test classes the ProtoNet is evaluated on")
p.add_argument("--batch", type=int, default=64, help="the classifier's batch size")
p.add_argument("--lr", type=float, default=1e-3, help="Adam's learning rate, both networks (S1)")
p.add_argument("--seed", type=int, default=0)
p.add_argument("--threads", type=int, default=2)
p.add_argument("--max-classes", type=int, help="the classifier's classes: the first N (default: every class loaded); a quick check")
a = p.parse_args()
for k in ("epochs", "episodes", "eval_tasks", "batch", "threads", "max_classes"):
    if getattr(a, k) is not None and getattr(a, k) < 1: p.error(f"--{k.replace('_', '-')} must be >= 1, got {getattr(a, k)}")
if not a.lr > 0: p.error(f"--lr must be > 0, got {a.lr}")
torch.set_num_threads(a.threads); torch.manual_seed(a.seed)
rng = np.random.default_rng(a.seed)
t_start = time.perf_counter()
omni = load_omniglot(size=28)
x = critic_input(omni.images, size=50)   # (n, 1, 50, 50) binary, ink = 1, as the critics see them
labels = np.asarray(omni.labels)
n_classes = int(labels.max()) + 1 if a.max_classes is None else min(a.max_classes, int(labels.max()) + 1)

# the standard classifier: 18 drawings of every class to train, 2 to test
test_idx = np.sort(np.concatenate([rng.choice(np.flatnonzero(labels == c), 2, replace=False) for c in range(n_classes)]))
train_idx = np.setdiff1d(np.flatnonzero(labels < n_classes), test_idx)
clf = nn.Sequential(critic_embedding(), nn.ReLU(), nn.Linear(256, n_classes))   # S17: Table S1 with Linear(256, n_classes)

# the one-shot classifier: the weak split's classes, episodes as S1's (20-way 1-shot)
split = weak_split(omni)
is_test_cls = omni.meta.class_name.isin(set(split["test"])).to_numpy()
proto = Critic("protonet")   # the ProtoNet critic of S1: body and metric layer
train_items, test_items = np.flatnonzero(~is_test_cls), np.flatnonzero(is_test_cls)
def sampler(items): return EpisodeSampler(np.unique(labels[items], return_inverse=True)[1], 20, 1, 5)   # positions in `items`, classes 0..k-1
def only_used(eps, items):   # the episodes re-indexed into the items they use (embedded once per evaluation), and those items
    used, pos = torch.unique(torch.cat([eps.support.flatten(), eps.query.flatten()]), return_inverse=True)
    n = eps.support.numel()
    return replace(eps, support=pos[:n].view_as(eps.support), query=pos[n:].view_as(eps.query)), items[used.numpy()]
eval_eps, eval_items = {}, {}
for k, (s, v) in enumerate((("train", train_items), ("test", test_items))):
    eval_eps[s], eval_items[s] = only_used(sampler(v).sample_batch(a.eval_tasks, seed=a.seed + 1 + k), v)

def episode_losses(z, eps):   # per episode: the ProtoNet loss and accuracy of its queries, from the embeddings z of the items it indexes
    s, q = z[eps.support], z[eps.query]                       # (T, 20, d): one support item a class, in label order; (T, n_q, d)
    order = eps.support_labels.argsort(1)
    protos = torch.gather(s, 1, order[..., None].expand(-1, -1, s.shape[-1]))   # 1-shot: the prototype is the support item
    logits = -torch.cdist(q, protos) ** 2
    loss = F.cross_entropy(logits.transpose(1, 2), eps.query_labels, reduction="none").mean(1)
    return loss, (logits.argmax(-1) == eps.query_labels).float().mean(1)

@torch.no_grad()
def evaluate(model_name, epoch):
    rows, items = [], []
    if model_name == "classifier":
        clf.eval()
        for s, idx in (("train", train_idx), ("test", test_idx)):
            out = torch.cat([clf(x[idx[i:i + 512]]) for i in range(0, len(idx), 512)])
            y = torch.as_tensor(labels[idx])
            loss = F.cross_entropy(out, y, reduction="none")
            rows.append(dict(model=model_name, epoch=epoch, split=s, loss_nats=float(loss.mean()), acc_frac=float((out.argmax(1) == y).float().mean())))
            if s == "test": items += [dict(model=model_name, epoch=epoch, item=int(i), loss_nats=float(l)) for i, l in zip(idx, loss)]
        clf.train()
    else:
        proto.eval()
        for s in ("train", "test"):
            z = torch.cat([proto(x[eval_items[s][i:i + 512]]) for i in range(0, len(eval_items[s]), 512)])
            loss, acc = episode_losses(z, eval_eps[s])
            rows.append(dict(model=model_name, epoch=epoch, split=s, loss_nats=float(loss.mean()), acc_frac=float(acc.mean())))
            if s == "test": items += [dict(model=model_name, epoch=epoch, item=i, loss_nats=float(l)) for i, l in enumerate(loss)]
        proto.train()
    print(json.dumps(rows[-1]), flush=True)
    return rows, items

rows, items, timings = [], [], {}
for name, model in (("classifier", clf), ("protonet", proto)):
    t0 = time.perf_counter()
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    r, i = evaluate(name, 0); rows += r; items += i
    for epoch in range(1, a.epochs + 1):
        if name == "classifier":
            order = torch.as_tensor(train_idx[rng.permutation(len(train_idx))])
            for b in range(0, len(order), a.batch):
                idx = order[b:b + a.batch]
                loss = F.cross_entropy(clf(x[idx]), torch.as_tensor(labels[idx.numpy()]))
                opt.zero_grad(); loss.backward(); opt.step()
        else:
            eps = sampler(train_items).sample_batch(a.episodes, seed=rng)
            for t in range(a.episodes):
                one, items_ = only_used(replace(eps, **{f.name: getattr(eps, f.name)[t:t + 1] for f in fields(eps)}), train_items)
                loss = episode_losses(proto(x[items_]), one)[0].mean()
                opt.zero_grad(); loss.backward(); opt.step()
        r, i = evaluate(name, epoch); rows += r; items += i
    timings[f"{name}_s"] = round(time.perf_counter() - t0, 1)

out = Path(a.out); out.mkdir(parents=True, exist_ok=True)
save_csv(pd.DataFrame(rows).assign(unit="loss_nats: cross-entropy in nats"), out/"losses.csv")
per_item = pd.DataFrame(items).round({"loss_nats": 5}).assign(unit="nats")   # about 20,000 rows: compressed
check_units(per_item)
with atomic_write(out/"test_losses.csv.gz") as tmp: per_item.to_csv(tmp, index=False, compression="gzip")
record = dict(args=vars(a), n_classes=n_classes, train_drawings=len(train_idx), test_drawings=len(test_idx),
              protonet_classes={"train": int(len(split["train"])), "test": int(len(split["test"]))},
              versions=dict(python=platform.python_version(), torch=torch.__version__, numpy=np.__version__),
              host=dict(platform=platform.platform(), torch_threads=torch.get_num_threads()),
              timings_s=timings | {"total_s": round(time.perf_counter() - t_start, 1)})
with atomic_write(out/"run.json") as tmp: tmp.write_text(json.dumps(record, indent=1, default=str))
