"""Downloads over a real (loopback) HTTP server, and concurrent writers of the same decoding cache."""
import hashlib, http.server, os, subprocess, sys, threading
from pathlib import Path
import numpy as np
import pytest
from fewshot_nb.data import omniglot as fd

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def server(tmp_path):
    "An HTTP server on 127.0.0.1 serving tmp_path/'srv'."
    srv = tmp_path/"srv"; srv.mkdir()
    handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(*a, directory=str(srv), **k)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield srv, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown(); httpd.server_close()


def test_fetch_downloads_verifies_and_leaves_nothing_on_bad_md5(server, tmp_path, monkeypatch):
    srv, url = server
    payload = os.urandom(300_000); (srv/"good.zip").write_bytes(payload)
    md5 = hashlib.md5(payload).hexdigest()
    root = tmp_path/"root"
    monkeypatch.setitem(fd.RESOURCES, "good.zip", fd.Resource("x", f"{url}/good.zip", md5))
    monkeypatch.setitem(fd.RESOURCES, "bad.zip", fd.Resource("x", f"{url}/good.zip", "0" * 32))
    monkeypatch.setitem(fd.RESOURCES, "gone.zip", fd.Resource("x", f"{url}/gone.zip", md5))
    assert fd.fetch("good.zip", root).read_bytes() == payload
    with pytest.raises(fd.ChecksumError, match="discarded"):
        fd.fetch("bad.zip", root)
    with pytest.raises(FileNotFoundError, match="FEWSHOT_DATA") as e:   # the server answers 404
        fd.fetch("gone.zip", root)
    assert f"{url}/gone.zip" in str(e.value)
    assert sorted(p.name for p in (root/"x").iterdir()) == ["good.zip"]   # no partial or temporary file


_DECODE = """
import sys, numpy as np
from fewshot_nb.data.omniglot import load_omniglot
d = load_omniglot('background_small2', size=int(sys.argv[1]))
print(len(d), int(d.images.sum()))
"""


def test_concurrent_first_decodes_share_one_valid_cache(tmp_path):
    env = {**os.environ, "FEWSHOT_CACHE": str(tmp_path/"cache")}
    procs = [subprocess.Popen([sys.executable, "-c", _DECODE, "24"], env=env, stdout=subprocess.PIPE, text=True)
             for _ in range(3)]
    outs = [p.communicate(timeout=300)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs) and len(set(outs)) == 1, outs
    files = sorted(p.name for p in (tmp_path/"cache"/"omniglot").iterdir())
    assert len(files) == 1 and files[0].endswith("_24px_box_v1.npz"), files    # one cache, no temporaries
    again = subprocess.run([sys.executable, "-c", _DECODE, "24"], env=env, capture_output=True, text=True, check=True)
    assert again.stdout.strip() == outs[0]
