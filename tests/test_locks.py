"""One process builds a shared entry, the others wait for it (issue 40, step 2).

Two jobs of one sweep often need the same feature-cache entry or the same trained checkpoint at the same time. Here
they are two real processes (`subprocess`, each a fresh interpreter with one thread) started together by a barrier:

- the feature cache (`features.feature_cache_entry`, what `pretrained_features` runs): the entry is built once, by one
  process, and both return the same features; a builder killed with SIGKILL while it holds the lock does not block
  the next one, which builds the entry; the `.pt` and its `.json` record are written so that a reader never sees a
  record without its entry, nor a record newer than its entry, and a reader holding the lock sees the two agree;
- the `Trainer` with `checkpoint=`: the second process waits for the first to finish training, then loads the
  checkpoint without training a step; a trainer killed with SIGKILL mid-run is taken over by the next one, which
  resumes from the last checkpoint and ends with the weights of an uninterrupted run.

The builds are tiny (synthetic features, a Conv4 of width 4 on 16 random 28-px images), slowed down with sleeps so
that the processes overlap; each test takes a few seconds, most of it starting interpreters.
"""
import json, os, runpy, signal, subprocess, sys, time
from pathlib import Path
import torch
from fewshot_nb.run_folders import cache_lock
from fewshot_nb.features import feature_cache_entry
from fewshot_nb.data.sources import FeatureSource

ROOT = Path(__file__).resolve().parent.parent

COMMON = '''
import os, sys, time, json, hashlib
from pathlib import Path
import torch
torch.set_num_threads(1)

def barrier(folder, name, n=2, limit=60):
    "Wait until `n` processes have arrived (imports done), so that what follows starts at the same time in all."
    folder = Path(folder); (folder/f"{name}.ready").write_text("")
    t0 = time.time()
    while len(list(folder.glob("*.ready"))) < n:
        if time.time() - t0 > limit: sys.exit("the other process never arrived")
        time.sleep(0.01)

def digest(t): return hashlib.sha256(t.numpy().tobytes()).hexdigest()[:16]
'''

FEATURES = COMMON + '''
from fewshot_nb.features import feature_cache_entry
from fewshot_nb.data.sources import FeatureSource

def build_for(calls, name, sleep):
    "A stand-in for pre-training that records its calls and takes `sleep` seconds."
    def build():
        with open(calls, "a") as f: f.write(f"{name}\\n")
        print("building", flush=True)
        time.sleep(sleep)                                   # long enough for the other process to arrive and wait
        g = torch.Generator().manual_seed(os.getpid())      # features that differ from one build to another
        src = FeatureSource(torch.rand(6, 4, generator=g), [0, 0, 1, 1, 2, 2])
        net = dict(name="linear", kwargs={}, state_dict=torch.nn.Linear(4, 4).state_dict())
        return dict(test=src, base=src, base_mean=src.feats.mean(0), backbone=net, record=dict(built_by=name))
    return build

def run(path, calls, name, sleep, sync=None):
    if sync: barrier(sync, name)
    feats, mean, record = feature_cache_entry(Path(path), dict(what="race"), build_for(calls, name, sleep))
    return dict(name=name, digest=digest(feats.feats), cached=record["cached"], built_by=record["built_by"])

if __name__ == "__main__":
    a = sys.argv[1:]
    print(json.dumps(run(a[0], a[1], a[2], float(a[3]), a[4] if len(a) > 4 else None)), flush=True)
'''

TRAIN = COMMON + '''
from fewshot_nb.training.trainer import Trainer, Supervised, Checkpoint
from fewshot_nb.training.backbones import Conv4
from fewshot_nb.data.streams import ImageSource, ClassStream

class Counted:
    "A batch source that records every batch drawn (process, step), slowed down by `sleep` seconds a batch."
    def __init__(self, inner, log, name, sleep): self.inner, self.kind, self.log, self.name, self.sleep = inner, inner.kind, log, name, sleep
    def config(self): return self.inner.config()
    def batch(self, step, seed):
        with open(self.log, "a") as f: f.write(f"{self.name} {step}\\n")
        time.sleep(self.sleep)
        return self.inner.batch(step, seed)

def run(checkpoint, steps_log, name, sleep, sync=None):
    "Train a Conv4 of width 4 for 40 steps on 16 random images (checkpoints every 5 steps); what it did, and a digest of its weights."
    if sync: barrier(sync, name)
    g = torch.Generator().manual_seed(0)
    data = ImageSource(torch.rand(16, 1, 28, 28, generator=g), torch.arange(16) % 4)
    torch.manual_seed(0)
    t = Trainer(Supervised(Conv4(width=4), 4), Counted(ClassStream(data, 8), steps_log, name, sleep), 40, lr=1e-2,
                seed=0, callbacks=[Checkpoint(checkpoint, every=5)] if checkpoint else None, device="cpu", progress=False)
    t.fit()
    w = torch.cat([p.detach().flatten() for p in t.method.parameters()])
    return dict(name=name, fit_from=t.fit_from, waited_s=t.waited_s, digest=digest(w))

if __name__ == "__main__":
    a = sys.argv[1:]
    print(json.dumps(run(a[0], a[1], a[2], float(a[3]), a[4] if len(a) > 4 else None)), flush=True)
'''


def script(tmp_path:Path, name:str, text:str) -> str:
    "A worker script written to a file: run in another process with `start`, or its functions in this one with `runpy.run_path`."
    f = tmp_path/f"{name}.py"; f.write_text(text)
    return str(f)


def start(*args) -> subprocess.Popen:
    "A worker interpreter of the project, one thread, run from the project root."
    env = os.environ | {"OMP_NUM_THREADS": "1", "FEWSHOT_PROGRESS": "0", "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, *map(str, args)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def result(p:subprocess.Popen, timeout=120) -> dict:
    out, err = p.communicate(timeout=timeout)
    assert p.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])


def race(tmp_path:Path, name:str, text:str, target:Path, log:Path, sleep:float) -> tuple[dict, dict]:
    "`run(target, log, who, sleep, sync)` of a worker script, in this process and in another at the same moment: (mine, theirs)."
    sync = tmp_path/"sync"; sync.mkdir()
    worker = script(tmp_path, name, text)
    other = start(worker, target, log, "other", sleep, sync)
    mine = runpy.run_path(worker)["run"](target, log, "this", sleep, sync)
    return mine, result(other)


def kill_inside(proc:subprocess.Popen, inside) -> None:
    "Call `inside()` (it waits, or asserts, until `proc` holds its lock mid-work), then SIGKILL `proc`, whatever happened."
    try: inside()
    finally:
        proc.send_signal(signal.SIGKILL); proc.wait()


def wait_for(cond, limit=60, what="the condition"):
    t0 = time.time()
    while not cond():
        assert time.time() - t0 < limit, f"{what} did not happen within {limit} s"
        time.sleep(0.01)


def test_two_processes_build_one_feature_entry_once(tmp_path):
    "This process and another ask for one missing entry at the same moment: one builds it, the other waits and reads it."
    entry, calls = tmp_path/"cache"/"race.pt", tmp_path/"calls.txt"
    mine, theirs = race(tmp_path, "features", FEATURES, entry, calls, 1.5)
    assert calls.read_text().split() in (["this"], ["other"]), calls.read_text()   # built once
    assert mine["digest"] == theirs["digest"], (mine, theirs)                   # both have the builder's features
    assert sorted([mine["cached"], theirs["cached"]]) == [False, True], (mine, theirs)   # one built it, the other read it
    assert mine["built_by"] == theirs["built_by"] == calls.read_text().split()[0]
    assert sorted(p.name for p in entry.parent.iterdir()) == ["race.json", "race.pt"]   # no lock file left behind


def test_a_killed_builder_does_not_block_the_next(tmp_path):
    "A process killed with SIGKILL while it builds (and holds the lock) leaves no entry; the next one builds it at once."
    entry, calls = tmp_path/"cache"/"killed.pt", tmp_path/"calls.txt"
    worker = script(tmp_path, "features", FEATURES)
    a = start(worker, entry, calls, "killed", 60)
    def inside():   # in build, holding the lock
        assert a.stdout.readline().strip() == "building", a.stderr.read()[-3000:]
        assert Path(str(entry) + ".lock").exists()
    kill_inside(a, inside)
    assert not entry.exists() and not entry.with_suffix(".json").exists()
    assert Path(str(entry) + ".lock").exists()                               # left behind by the killed holder
    t0 = time.monotonic()
    mine = runpy.run_path(worker)["run"](entry, calls, "next", 0.0)
    assert time.monotonic() - t0 < 5, "the next builder waited for a dead one"
    assert mine["cached"] is False and mine["built_by"] == "next"
    assert calls.read_text().split() == ["killed", "next"]
    assert sorted(p.name for p in entry.parent.iterdir()) == ["killed.json", "killed.pt"]


WRITER = COMMON + '''
from fewshot_nb.features import write_feature_cache
from fewshot_nb.data.sources import FeatureSource
path, rounds = Path(sys.argv[1]), int(sys.argv[2])
_replace = os.replace
def slow_replace(a, b):                   # a wide gap between the two renames, where a reader can look
    _replace(a, b); time.sleep(0.1)
os.replace = slow_replace
src = FeatureSource(torch.rand(6, 4), [0, 0, 1, 1, 2, 2])
net = dict(name="linear", kwargs={}, state_dict=torch.nn.Linear(4, 4).state_dict())
print("writing", flush=True)
for r in range(rounds):
    write_feature_cache(path, src, src.feats.mean(0), dict(round=r), dict(what="pair"), base=src, backbone=net)
    time.sleep(0.2)                       # outside the lock: a reader that takes it gets in
'''


def test_a_reader_never_sees_a_record_without_its_entry(tmp_path):
    "The `.pt` is renamed into place before its `.json`: the record never runs ahead of its entry."
    entry = tmp_path/"cache"/"pair.pt"; record = entry.with_suffix(".json")
    w = start(script(tmp_path, "writer", WRITER), entry, 6)
    assert w.stdout.readline().strip() == "writing", w.stderr.read()[-3000:]
    seen, looks, locked = set(), 0, 0
    while w.poll() is None:
        time.sleep(0.005); looks += 1
        if not record.exists(): continue
        r_json = json.loads(record.read_text())["round"]
        assert entry.exists(), "a record without its entry"
        r_pt = torch.load(entry, weights_only=True)["record"]["round"]
        assert r_pt >= r_json, f"the record of round {r_json} was in place before its entry (round {r_pt})"
        seen.add((r_json, r_pt))
        if looks % 20 == 0:               # a reader that takes the lock sees the two files of one round
            with cache_lock(entry):
                a, b = json.loads(record.read_text())["round"], torch.load(entry, weights_only=True)["record"]["round"]
            assert a == b, (a, b); locked += 1
    assert w.returncode == 0, w.stderr.read()[-3000:]
    assert any(p > j for j, p in seen), f"the reader never looked between the two renames: {sorted(seen)}"
    assert locked >= 1
    assert sorted(p.name for p in entry.parent.iterdir()) == ["pair.json", "pair.pt"]


def test_two_processes_train_one_checkpoint_once(tmp_path):
    "Two trainers of one checkpoint at once: one trains every step, the other waits for it and loads the result."
    ck, steps = tmp_path/"ck"/"model.pt", tmp_path/"steps.txt"
    mine, theirs = race(tmp_path, "train", TRAIN, ck, steps, 0.1)   # 4 s of training: the other arrives while it runs, even on a busy machine
    drawn = [l.split() for l in steps.read_text().splitlines()]
    assert len({who for who, _ in drawn}) == 1, "both processes trained"
    assert [int(s) for _, s in drawn] == list(range(40)), "each step once"
    first, second = sorted([mine, theirs], key=lambda r: r["fit_from"])
    assert (first["fit_from"], second["fit_from"]) == (0, 40), (mine, theirs)   # the second trained nothing
    assert second["waited_s"] > 0.1, second                                   # ... because it waited for the first
    assert mine["digest"] == theirs["digest"]                                   # and both hold the trained weights
    assert sorted(p.name for p in ck.parent.iterdir()) == ["model.pt"]


def test_a_killed_trainer_is_taken_over(tmp_path):
    "A trainer killed with SIGKILL mid-run: the next one does not wait, resumes from the last checkpoint, ends as an uninterrupted run."
    ck, steps = tmp_path/"ck"/"model.pt", tmp_path/"steps.txt"
    worker = script(tmp_path, "train", TRAIN)
    a = start(worker, ck, steps, "killed", 0.05)
    kill_inside(a, lambda: wait_for(lambda: ck.exists() and torch.load(ck, weights_only=True)["step"] >= 10, what="a checkpoint at step 10"))
    at = torch.load(ck, weights_only=True)["step"]
    assert at < 40, "the first trainer finished before it was killed: slow it down"
    assert Path(str(ck) + ".lock").exists()                                  # left behind by the killed holder
    run = runpy.run_path(worker)["run"]
    resumed = run(ck, steps, "next", 0.0)
    assert resumed["fit_from"] == at and resumed["waited_s"] < 1, resumed     # no wait: the lock died with its holder
    assert run("", tmp_path/"steps_whole.txt", "whole", 0.0)["digest"] == resumed["digest"]   # resumed exactly
    assert sorted(p.name for p in ck.parent.iterdir()) == ["model.pt"]
