"""fewshot_nb.data.datasets: the exit status of `fewshot-nb data verify` (verify_main) on miniature copies of every layout,
and decoding workers that end with their parent."""
import os, signal, subprocess, sys, textwrap, time, zipfile
from pathlib import Path
import pytest
from fewshot_nb.data.datasets import DATASETS, list_datasets, verify_main, write_listing, write_miniature

# (layout, miniature options): the two Omniglot forms are the extracted folders and Lake's zip archives
CASES = [("mini_imagenet", {}), ("tiered_imagenet", {}), ("cub", {}), ("cifar_fs", {}), ("fc100", {}), ("image_folder", {}),
         ("omniglot", {}), ("omniglot", {"archive": True})]
IDS = [n + ("_zip" if kw else "") for n, kw in CASES]


def test_every_layout_is_covered():
    assert sorted({n for n, _ in CASES}) == list_datasets()


def _copy(tmp_path:Path, name:str, kw:dict) -> Path:
    root = write_miniature(name, tmp_path/name, **kw)
    if name == "image_folder": write_listing(name, root)   # a class-folder tree needs a record to find deleted files
    return root


def _rewrite(root:Path, file:str, how:str):
    "Delete `file` ('delete') or keep its first third ('cut'); 'a.zip::member' is rewritten inside its archive."
    if "::" not in file:
        p = root/file
        data = p.read_bytes()
        p.unlink() if how == "delete" else p.write_bytes(data[:len(data) // 3])
        return
    archive, member = file.split("::")
    with zipfile.ZipFile(root/archive) as z: items = [(n, z.read(n)) for n in z.namelist()]
    with zipfile.ZipFile(root/archive, "w") as z:
        for n, b in items:
            if n != member: z.writestr(n, b)
            elif how == "cut": z.writestr(n, b[:len(b) // 3])


def _verify(name, root, capsys, **kw):
    status = verify_main(name, str(root), workers=0, **kw)
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_complete_copy_exits_0(tmp_path, capsys, name, kw):
    status, out, err = _verify(name, _copy(tmp_path, name, kw), capsys)
    assert (status, err) == (0, ""), out
    assert out.startswith(f"{name}: OK")


@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_one_missing_image_exits_1_and_is_named(tmp_path, capsys, name, kw):
    root = _copy(tmp_path, name, kw)
    layout = DATASETS.make(name, root=root)
    split = layout.splits[0]
    lst = layout.listing(split)
    gone = lst.file.iloc[-1]
    _rewrite(root, gone, "delete")
    status, out, err = _verify(name, root, capsys)
    assert status == 1 and out.startswith(f"{name}: FAILED"), out
    if name in ("cifar_fs", "fc100"):   # these layouts list classes, not files: the class that lost an image is named
        assert f"{split}: class {lst.label.iloc[-1]!r} has 3 images, 4 in most classes (1 missing)" in out, out
    else:
        assert f"missing (1):\n  {split}: {gone}\n" in out, out


@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_one_truncated_image_exits_1_and_is_named(tmp_path, capsys, name, kw):
    root = _copy(tmp_path, name, kw)
    layout = DATASETS.make(name, root=root)
    split = layout.splits[-1]
    cut = layout.listing(split).file.iloc[0]
    _rewrite(root, cut, "cut")
    status, out, err = _verify(name, root, capsys)
    assert status == 1, out
    assert f"unreadable (1):\n  {split}: {cut} (" in out, out


@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_a_copy_with_every_image_gone_exits_1(tmp_path, capsys, name, kw):
    "Every image deleted (inside its archive too), split files and folders kept: nothing may pass, whatever the layout lists."
    root = _copy(tmp_path, name, kw)
    layout = DATASETS.make(name, root=root)
    files = [f for split in layout.splits for f in layout.listing(split).file]
    for archive in {f.split("::")[0] for f in files if "::" in f}:   # Omniglot's zips: an archive with no image left
        with zipfile.ZipFile(root/archive) as z: keep = [(n, z.read(n)) for n in z.namelist() if n.endswith("/")]
        with zipfile.ZipFile(root/archive, "w") as z:
            for n, b in keep: z.writestr(n, b)
    for f in files:
        if "::" not in f: (root/f).unlink()
    status, out, err = _verify(name, root, capsys)
    assert status == 1 and out.startswith(f"{name}: FAILED"), out + err


def test_a_split_file_listing_nothing_exits_1(tmp_path, capsys):
    "CUB's images.txt emptied: no image is listed, so none is missing, and the copy still fails."
    root = write_miniature("cub", tmp_path/"cub")
    (root/"images.txt").write_text("")
    status, out, _ = _verify("cub", root, capsys)
    assert status == 1 and "train: no image is listed or found" in out, out


@pytest.mark.parametrize("where", ["empty", "nowhere"])
def test_data_verify_without_data_exits_nonzero(tmp_path, monkeypatch, capsys, where):
    "`fewshot-nb data verify` with FEWSHOT_DATA at an empty or absent folder, and `--dataset NAME --root` there, for every layout."
    from fewshot_nb.cli import main
    root = tmp_path/where
    if where == "empty":
        root.mkdir()
        (root/"omniglot"/"images_background").mkdir(parents=True); (root/"omniglot"/"images_evaluation").mkdir()
    monkeypatch.setenv("FEWSHOT_DATA", str(root))
    assert main(["data", "verify"]) == 1                       # every known file is missing
    assert main(["data", "verify", "small", "runs"]) == 1
    assert "missing: images_background_small1.zip" in capsys.readouterr().err
    for name in list_datasets():
        status = main(["data", "verify", "--dataset", name, "--root", str(root), "--workers", "0"])
        assert status in (1, 2), (name, status, capsys.readouterr())
    # Omniglot's set folders with no image in them: a copy holding nothing (exited 0 before)
    assert main(["data", "verify", "--dataset", "omniglot", "--root", str(root/"omniglot"), "--workers", "0"]) == (1 if where == "empty" else 2)


def test_first_ten_faulty_files_are_named(tmp_path, capsys):
    root = write_miniature("mini_imagenet", tmp_path/"mini", images=5)
    files = DATASETS.make("mini_imagenet", root=root).listing("train").file
    for f in files[:12]: (root/f).unlink()
    status, out, _ = _verify("mini_imagenet", root, capsys)
    assert status == 1 and "missing (12, the first 10):" in out
    assert sum(line.startswith("  train: images/") for line in out.splitlines()) == 10


def test_official_counts_of_a_miniature_exit_1(tmp_path, capsys):
    root = write_miniature("cifar_fs", tmp_path/"cfs", size=(32, 32))
    assert _verify("cifar_fs", root, capsys)[0] == 0
    status, out, _ = _verify("cifar_fs", root, capsys, official=True)
    assert status == 1 and "train: classes: expected 64, found 3" in out and "images per class: expected 600, found 4" in out


@pytest.mark.parametrize("args,message", [
    (("mini_imagenet", "nowhere"), "no folder"),
    (("mini-imagenet", "."), "did you mean 'mini_imagenet'"),
    (("image_folder", "."), "no published counts"),
])
def test_a_check_that_cannot_run_exits_2(tmp_path, capsys, args, message):
    name, root = args
    if name == "image_folder": root = write_miniature("image_folder", tmp_path/"tree")
    status, out, err = _verify(name, tmp_path/root if root == "nowhere" else root, capsys, official=name == "image_folder")
    assert (status, out) == (2, "") and message in err, err


def test_missing_split_files_exit_2(tmp_path, capsys):
    root = write_miniature("mini_imagenet", tmp_path/"mini")
    (root/"val.csv").unlink()
    status, out, err = _verify("mini_imagenet", root, capsys)
    assert status == 2 and "val.csv" in err and "meta-learning-lstm" in err


def test_exit_status_of_a_process(tmp_path):
    "The status reaches the shell as the process's exit status (what `fewshot-nb data verify` does with it)."
    root = write_miniature("cub", tmp_path/"cub")
    code = "import sys; from fewshot_nb.data.datasets import verify_main; sys.exit(verify_main('cub', sys.argv[1], workers=2))"
    ok = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    gone = DATASETS.make("cub", root=root).listing("val").file.iloc[0]
    (root/gone).unlink()
    bad = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True)
    assert bad.returncode == 1 and f"val: {gone}" in bad.stdout


def _alive(pid:int) -> bool:
    "Whether process `pid` exists and is not a zombie (a container's PID 1 may never reap orphans)."
    try: state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError): return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc (Linux)")
def test_workers_end_with_a_killed_parent():
    "A parent killed with SIGKILL runs no cleanup; its decoding workers must still end, within a few seconds."
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import os, time
        from fewshot_nb.data.sources import decode_pool
        def pid(_): time.sleep(0.2); return os.getpid()
        with decode_pool(2) as pool:
            print(*sorted(set(pool.map(pid, range(8)))), flush=True)
            time.sleep(120)
        """)], stdout=subprocess.PIPE, text=True)
    try:
        workers = [int(p) for p in child.stdout.readline().split()]
        assert len(workers) == 2 and all(_alive(p) for p in workers), workers
    finally:
        os.kill(child.pid, signal.SIGKILL); child.wait()
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in workers) and time.monotonic() < deadline: time.sleep(0.1)
    left = [p for p in workers if _alive(p)]
    for p in left: os.kill(p, signal.SIGKILL)   # do not leave them behind when the test fails
    assert not left, f"workers {left} outlived their killed parent"
