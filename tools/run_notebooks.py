#!/usr/bin/env python
"""Execute notebooks in place, as `nbdev-test` runs them, and store their outputs.

    python tools/run_notebooks.py nbs/training/41_trainer.ipynb [more.ipynb ...] [--flags slow]

Each notebook runs in its own folder (as under nbdev-test) in a fresh IPython shell. Cells flagged with one of
`tst_flags` (`notest`, `slow`, `cuda`) are skipped and keep the outputs they had, unless named in `--flags`.
The run stops at the first failing cell and leaves that notebook untouched; a notebook that runs through is
written to a temporary file and renamed over the original. The outputs of `show_doc` cells are not stored: the
docs build makes them again from the code, and stored copies only go stale. Stored PNG figures are re-encoded with
a palette of 256 colours (no dithering), which keeps a plot's look at about a third of the bytes. Run `nbdev-clean`
afterwards.

    python tools/run_notebooks.py --tidy nbs/exp_beta.ipynb   # only the show_doc and PNG steps, nothing run
"""
import argparse, base64, io, os, sys, tempfile
from pathlib import Path
from fastcore.nbio import read_nb, write_nb
from execnb.shell import CaptureShell
from fastcore.xtras import working_directory
from nbdev.config import get_config


def _flags(cell) -> set:
    "The `#| flag` words of a code cell's first directive lines."
    out = set()
    for line in cell.source.splitlines():
        if not line.startswith("#|"): break
        out |= set(line[2:].split())
    return out


def write_atomic(nb, path:Path) -> None:
    "Write `nb` to a temporary file beside `path`, then rename it over `path`."
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write_nb(nb, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp): os.unlink(tmp)


def is_show_doc(cell) -> bool:
    "Whether a code cell only shows documentation (its first line that is not a directive calls `show_doc`)."
    lines = [l for l in cell.source.splitlines() if l.strip() and not l.startswith("#|")]
    return cell.cell_type == "code" and bool(lines) and lines[0].lstrip().startswith("show_doc(")


def palette_png(png:bytes, colors:int=256) -> bytes:
    "`png` re-encoded with a palette of at most `colors` colours and no dithering, or `png` itself when that is not smaller."
    from PIL import Image
    im = Image.open(io.BytesIO(png))
    if im.mode == "P": return png
    out = io.BytesIO()
    im.convert("RGB").quantize(colors, dither=Image.Dither.NONE).save(out, "PNG", optimize=True)
    return out.getvalue() if out.tell() < len(png) else png


def tidy(nb) -> None:
    "Clear the outputs of show_doc cells and re-encode stored PNG figures with a palette, in place."
    for c in nb.cells:
        if is_show_doc(c): c.outputs = []
        for o in c.get("outputs", []):
            data = o.get("data", {})
            if "image/png" in data:
                raw = base64.b64decode(data["image/png"])
                data["image/png"] = base64.b64encode(palette_png(raw)).decode()


def run_notebook(path:Path, skip:set) -> None:
    nb = read_nb(path)
    skipped = lambda c: c.cell_type != "code" or bool(_flags(c) & skip)
    with working_directory(path.parent):
        shell = CaptureShell()
        shell.run_all(nb, exc_stop=True, preproc=skipped)
    tidy(nb)
    write_atomic(nb, path)


def tidy_file(path:Path) -> None:
    "`tidy` the notebook at `path`, writing through a temporary file."
    nb = read_nb(path)
    tidy(nb)
    write_atomic(nb, path)


def main(argv=None):
    # Stored outputs are the docs: no progress bars (fewshot_nb.core.progress reads this when a bar is made).
    os.environ["FEWSHOT_PROGRESS"] = "0"
    os.environ["FEWSHOT_LOG"] = "WARNING"   # experiment_setup's level: its INFO lines name files on this machine
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("notebooks", nargs="+", type=Path)
    p.add_argument("--flags", nargs="*", default=[], help="flagged cells to run too (e.g. slow)")
    p.add_argument("--tidy", action="store_true", help="run nothing: only clear show_doc outputs and re-encode stored PNGs with a palette")
    args = p.parse_args(argv)
    if args.tidy:
        for nb in args.notebooks: tidy_file(nb)
        return
    skip = set(get_config().tst_flags) - set(args.flags)
    for nb in args.notebooks:
        if not nb.is_file(): sys.exit(f"{nb}: no such notebook")
        print(f"running {nb} (skipping cells flagged {sorted(skip)})", flush=True)
        run_notebook(nb.resolve(), skip)
    print("done: now run nbdev-clean")


if __name__ == "__main__":
    main()
