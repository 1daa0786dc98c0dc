"""One way to seed (issue 47): a library function that seeds what it draws does so without changing its caller's global
random state. Every call of the package that seeds a global generator is either in a function decorated with
`core.keeps_global_rng` or in a `torch.random.fork_rng` block (torch's generator only), `core.seed_everything` alone
excepted (its purpose); and the functions that train or build models leave the caller's state as it was."""
import ast, random
from pathlib import Path
import numpy as np
import pytest
import torch

PKG = Path(__file__).resolve().parents[1]/"fewshot_nb"
SEEDING = {"torch.manual_seed", "torch.cuda.manual_seed_all", "np.random.seed", "random.seed", "seed_everything"}


def _seeding_calls():
    "(module, line, call, enclosing function, its decorators, inside a `with ... fork_rng` block)"
    for p in sorted(PKG.rglob("*.py")):
        tree = ast.parse(p.read_text())
        parent = {ch: n for n in ast.walk(tree) for ch in ast.iter_child_nodes(n)}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and ast.unparse(node.func) in SEEDING): continue
            n, forked, fn = node, False, None
            while n in parent:
                n = parent[n]
                if isinstance(n, ast.With) and any("fork_rng" in ast.unparse(i.context_expr) for i in n.items): forked = True
                if isinstance(n, ast.FunctionDef) and fn is None: fn = n
            yield (p.relative_to(PKG).as_posix(), node.lineno, ast.unparse(node.func), fn.name if fn else None,
                   [ast.unparse(d) for d in fn.decorator_list] if fn else [], forked)


def test_every_seeding_call_keeps_the_callers_state():
    bad = [f"{m}:{line} {call} in {fn}" for m, line, call, fn, decos, forked in _seeding_calls()
           if not (fn == "seed_everything" and m == "core.py")
           and "keeps_global_rng" not in decos and not (forked and call == "torch.manual_seed")]
    assert not bad, f"seeding calls that reseed the caller's global state (decorate the function with keeps_global_rng): {bad}"


def test_the_scan_finds_what_it_looks_for():
    calls = list(_seeding_calls())
    assert any(fn == "_fit" and "keeps_global_rng" in d for _, _, _, fn, d, _ in calls)   # the trainer's per-step seed
    assert any(forked for *_, forked in calls)                                           # and the fork_rng blocks


def _state():
    return torch.get_rng_state().clone(), np.random.get_state()[1].copy(), random.getstate()


def _unchanged(before):
    t, n, p = _state()
    return torch.equal(t, before[0]) and np.array_equal(n, before[1]) and p == before[2]


def test_training_and_building_leave_the_global_state_unchanged():
    from fewshot_nb.data.streams import ImageSource, ClassStream
    from fewshot_nb.training.trainer import Trainer, Supervised
    from fewshot_nb.training.backbones import Conv4
    from fewshot_nb.bench.generation import _plan, train_generative_model
    from fewshot_nb.bongard.baselines import untrained_bongard
    torch.manual_seed(123); np.random.seed(123); random.seed(123)
    g = torch.Generator().manual_seed(0)
    data = ImageSource(torch.rand(24, 1, 28, 28, generator=g), torch.arange(24) % 4)   # 6 images a class: sets of 5
    method = Supervised(Conv4(width=4), 4)      # the caller's own draws (its initial weights), before the snapshot
    before = _state()
    Trainer(method, ClassStream(data, 8), n_steps=2, seed=0, progress=False).fit()
    assert _unchanged(before), "Trainer.fit changed the caller's global random state"
    plan = _plan(28, data, "vae_ns", steps=1, seed=3)
    assert _unchanged(before), "building a generative model changed the caller's global random state"
    train_generative_model(plan["model"], data, steps=1, batch_size=2, progress=False)
    assert _unchanged(before), "train_generative_model changed the caller's global random state"
    untrained_bongard("protonet", seed=1)
    assert _unchanged(before), "untrained_bongard changed the caller's global random state"


def test_seeded_functions_still_give_their_seeds_draws():
    "Decorated, a function's own draws come from its seed as before: two calls with one seed, one model."
    from fewshot_nb.bongard.baselines import untrained_bongard
    w1 = [v.clone() for v in untrained_bongard("protonet", seed=4).state_dict().values()]
    torch.manual_seed(999)
    w2 = list(untrained_bongard("protonet", seed=4).state_dict().values())
    assert all(torch.equal(x, y) for x, y in zip(w1, w2))
