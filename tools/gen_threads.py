#!/usr/bin/env python
"""Train one exp_generation configuration again with a chosen torch thread count, and compare with stored results.

Two stored runs of `nbs/exp_generation.ipynb` hold the same configuration (the VAE-NS with a context of 2, trained
2,700 steps at seed 0: checkpoint tag `vae_ns_seed0_2dc0214d`) with different numbers. This tool trains that
configuration from scratch (into a fresh checkpoint folder, so nothing is loaded) once per thread count given, scores
it on the generation bench exactly as the notebook does (the same bench, prototypes, sample seed and critics), and
writes one row per thread count to `OUT/threads.csv`: the score, the final training loss, and which stored result,
if any, it reproduces to the digits those files store.

    FEWSHOT_DATA=../shared/data python tools/gen_threads.py --threads 1 --out nbs/results/exp_generation_threads
    FEWSHOT_DATA=../shared/data python tools/gen_threads.py --threads 2 --out nbs/results/exp_generation_threads

Each call appends (or replaces) its thread count's row, so the two can run one after the other or at once.
"""
import argparse, json, os, platform, sys, tempfile, time
from pathlib import Path
import pandas as pd, torch

ROOT = Path(__file__).resolve().parent.parent
# the configuration of both stored runs: `job('vae_ns', 0, dict(set_size=2))` of the notebook with epochs None, steps 2700
CONFIG = dict(name="vae_ns", preset="small", steps=2700, epochs=None, batch_size=32, seed=0, beta=5.0, set_size=2)
STORED = {"exp_generation_context_steps": ROOT/"nbs/results/exp_generation_context_steps",
          "exp_generation_context_steps3": ROOT/"nbs/results/exp_generation_context_steps3"}
TAG = "vae_ns_seed0_2dc0214d"


def stored_point(folder:Path) -> pd.Series:
    "The context-2, seed-0 point of a stored run's summary.csv."
    s = pd.read_csv(folder/"summary.csv")
    return s[(s.experiment == "context") & (s.seed == 0) & (s.set_size == 2)].iloc[0]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, required=True, help="torch threads of the training process")
    ap.add_argument("--out", type=Path, required=True, help="folder of threads.csv")
    a = ap.parse_args(argv)
    if a.threads < 1: ap.error(f"--threads must be >= 1, got {a.threads}")
    torch.set_num_threads(a.threads)
    from fewshot_nb.core import save_csv
    from fewshot_nb.bench.generation import GenerationBench, run_generative_model, summarise_scores
    bench = GenerationBench(image_size=28, sets="small", n_per_class=500, seed=0)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as ck:   # a fresh folder: the model is trained here, never loaded
        r = run_generative_model(bench, **CONFIG, sample_seed=0, checkpoints=ck, device="cpu")
    if r["tag"] != TAG:
        sys.exit(f"the configuration's tag is {r['tag']}, not the stored runs' {TAG}: the library's defaults changed")
    p = summarise_scores(r["scores"])
    row = dict(threads=a.threads, diversity=p["diversity"], recognizability_frac=p["recognizability_frac"],
               final_loss=r["final_loss"], steps=r["steps"], tag=r["tag"])
    # a stored result is reproduced when both measures agree to the rounding of the stored CSVs (6 significant digits)
    same = [k for k, f in STORED.items()
            if abs(stored_point(f).diversity - row["diversity"]) < 1e-4 and abs(stored_point(f).recognizability_frac - row["recognizability_frac"]) < 1e-6]
    row["matches"] = " and ".join(same)
    a.out.mkdir(parents=True, exist_ok=True)
    f = a.out/"threads.csv"
    old = pd.read_csv(f) if f.is_file() else pd.DataFrame()
    new = pd.concat([old[old.threads != a.threads] if len(old) else old, pd.DataFrame([row])], ignore_index=True).sort_values("threads")
    save_csv(new, f)
    rec = a.out/f"run_threads{a.threads}.json"
    rec.write_text(json.dumps(dict(command=" ".join(["python", "tools/gen_threads.py"] + (argv or sys.argv[1:])), config=CONFIG,
                                   threads=a.threads, omp_num_threads=os.environ.get("OMP_NUM_THREADS"), torch=torch.__version__,
                                   machine=platform.machine(), processor=platform.processor(),
                                   seconds=round(time.perf_counter() - t0, 1)), indent=1) + "\n")
    print(pd.DataFrame([row]).to_string(index=False))


if __name__ == "__main__":
    main()
