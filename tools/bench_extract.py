#!/usr/bin/env python
"""Images per second of decoding and of ResNet-18 feature extraction at 84 px, from a folder of ImageNet-sized JPEGs.

    OMP_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE python tools/bench_extract.py [--images 256] [--batch 64]

Writes `--images` generated JPEGs of 500 x 375 px (smooth random colour fields plus noise, quality 90) into a temporary
class-folder tree, then times, each after one warm-up batch:
  decode            `ImageFilesSource.batches` in the evaluation transform of the realistic-transductive code
                    (`EvalTransform`: decode, resize to 96, crop 84, normalise), with 0 and 2 worker processes;
  ResNet-18         the forward pass alone, on images decoded beforehand;
  extract_features  both together, decoding with 0, 1 and 2 worker processes.
Prints one table (images/s) and the load average before and after: other processes on the machine lower the figures.
"""
import argparse, os, shutil, tempfile, time
from pathlib import Path
import numpy as np, torch
from PIL import Image
from fewshot_nb.data.datasets import make_dataset, ImageFilesSource
from fewshot_nb.features import extract_features
from fewshot_nb.training.backbones import ResNet18


def write_jpegs(root:Path, n:int, seed:int=0) -> None:
    "n JPEGs of 500 x 375 px in 4 class folders: bicubic-upsampled 8 x 6 colour fields plus Gaussian noise (sd 12)."
    rng = np.random.default_rng(seed)
    for i in range(n):
        base = Image.fromarray(rng.integers(0, 256, (6, 8, 3), dtype=np.uint8)).resize((500, 375), Image.BICUBIC)
        a = np.clip(np.asarray(base, dtype=np.float32) + rng.normal(0, 12, (375, 500, 3)), 0, 255).astype(np.uint8)
        (root/f"c{i % 4}").mkdir(parents=True, exist_ok=True)
        Image.fromarray(a).save(root/f"c{i % 4}"/f"{i:05d}.jpg", quality=90)


def rate(fn, n:int) -> float:
    "Images per second of fn(), which handles n images."
    t = time.perf_counter(); fn(); return n / (time.perf_counter() - t)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--images", type=int, default=256, help="number of JPEGs")
    p.add_argument("--batch", type=int, default=64, help="images per batch")
    a = p.parse_args()
    if a.images < 2 * a.batch: p.error("--images must be at least twice --batch (one warm-up batch, then the timed ones)")
    load0 = os.getloadavg()
    root = Path(tempfile.mkdtemp(prefix="bench_extract_"))
    try:
        write_jpegs(root, a.images)
        kb = sum(f.stat().st_size for f in root.rglob("*.jpg")) / a.images / 1024
        src = make_dataset("image_folder", root, "all")
        net = ResNet18().eval()
        rows = {}
        for w in (0, 2):
            next(src.batches(np.arange(a.batch), a.batch, workers=w))   # warm-up
            rows[f"decode, {w} workers"] = rate(lambda: [None for _ in src.batches(batch_size=a.batch, workers=w)], len(src))
        x = torch.cat(list(src.batches(batch_size=a.batch, workers=2)))
        with torch.no_grad():
            net(x[:a.batch])
            rows["ResNet-18 forward only"] = rate(lambda: [net(x[i:i + a.batch]) for i in range(0, len(x), a.batch)], len(x))
        for w in (0, 1, 2):
            warm = ImageFilesSource(root, src.files[:a.batch], ["c"] * a.batch)
            extract_features(net, warm, batch_size=a.batch, workers=w, progress=False)   # warm-up
            rows[f"extract_features, {w} workers"] = rate(
                lambda: extract_features(net, src, batch_size=a.batch, workers=w, progress=False), len(src))
    finally: shutil.rmtree(root)
    load1 = os.getloadavg()
    print(f"{a.images} JPEGs of 500x375 px ({kb:.0f} KB each on average), batches of {a.batch}, torch threads "
          f"{torch.get_num_threads()}, OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', '(unset)')}, {os.cpu_count()} CPUs")
    print(f"1-minute load average before {load0[0]:.2f}, after {load1[0]:.2f}"
          + (f": the machine was busy (more runnable processes than its {os.cpu_count()} CPUs), so these figures are lower "
             "than on a quiet machine" if max(load0[0], load1[0]) > (os.cpu_count() or 1) else ""))
    for k, v in rows.items(): print(f"  {k:<30} {v:7.1f} images/s")


if __name__ == "__main__": main()
