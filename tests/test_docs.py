"""The docs site: its Quarto configuration, and the offline preview of its pages (tools/build_docs.py) checked in
headless Chromium: pages load without console errors, internal links and anchors resolve, every public
function, class and method is documented on its module's page with its signature and docments, every image
loads; screenshots of three pages go to _artifacts/screenshots/.

The browser tests need Debian's `chromium` and `chromium-driver` (and selenium from PyPI); without them they
are skipped, unless FEWSHOT_REQUIRE_BROWSER=1, when they fail.
"""
import ast, html, importlib.util, inspect, json, os, re, shutil, struct, threading
from functools import partial
from http.server import ThreadingHTTPServer, SimpleHTTPRequestHandler
from pathlib import Path
from urllib.parse import urlsplit
import pytest
import yaml

pytestmark = pytest.mark.xdist_group("docs")   # one worker builds what these tests share, once

ROOT = Path(__file__).resolve().parent.parent
NBS = ROOT/"nbs"
SITE = "https://fewshot-nb.github.io/fewshot_nb/"
SCREENSHOTS = ROOT/"_artifacts"/"screenshots"
SHOTS = {"index": "index.html", "samplers": "data/samplers.html", "exp_beta": "exp_beta.html"}
REQUIRED_SECTIONS = ["Foundations", "Data and episodes", "Solvers", "Training", "Generation", "Bongard", "Sweeps",
                     "Experiments"]


from tools_loader import load_tool


bd = load_tool("build_docs")
NOTEBOOKS = [p.relative_to(NBS).as_posix() for p in bd.notebooks(NBS)]


def _nbdev_config():
    from fastcore.xtras import working_directory
    from nbdev.config import get_config
    with working_directory(ROOT): return get_config()


# ---------------------------------------------------------------------------------------------- configuration
def test_nbdev_yml_is_what_nbdev_writes():
    "nbdev rewrites nbs/nbdev.yml from pyproject.toml whenever it processes notebooks: the committed file must be that text."
    from nbdev.quarto import _nbdev_yml
    cfg = _nbdev_config()
    vals = {k: cfg[k] for k in ["title", "description", "branch", "git_url", "doc_host", "doc_baseurl"]}
    vals["doc_path"] = cfg.doc_path.name
    assert (NBS/"nbdev.yml").read_text() == _nbdev_yml.format(**vals), \
        "nbs/nbdev.yml differs from what nbdev writes: run `python -c 'from nbdev.quarto import refresh_quarto_yml; refresh_quarto_yml()'` and commit it"


def test_pages_are_the_project_notebooks(tmp_path):
    "Runs made inside nbs/ (runs/, git-ignored) and nbdev's or Jupyter's scratch copies make no page."
    for rel in ["index.ipynb", "data/10_a.ipynb", "runs/exp_beta.ipynb", "data/runs/x.ipynb", "_proc/index.ipynb",
                ".ipynb_checkpoints/index-checkpoint.ipynb", "_draft.ipynb", "runs.ipynb"]:
        (tmp_path/rel).parent.mkdir(parents=True, exist_ok=True); (tmp_path/rel).write_text("{}")
    assert [p.relative_to(tmp_path).as_posix() for p in bd.notebooks(tmp_path)] == ["data/10_a.ipynb", "index.ipynb", "runs.ipynb"]


def test_sidebar_is_custom_and_complete():
    "custom_sidebar keeps nbdev from rewriting nbs/sidebar.yml; it lists every page once, in the site's sections."
    assert _nbdev_config().custom_sidebar is True
    website, contents = bd.load_site(NBS)
    entries = bd.sidebar_entries(contents)
    listed = [nb for _, nbs in entries for nb in nbs]
    dups = sorted({nb for nb in listed if listed.count(nb) > 1})
    assert not dups, f"listed more than once in sidebar.yml: {dups}"
    assert sorted(listed) == sorted(NOTEBOOKS), \
        f"sidebar.yml and nbs/ differ: missing {sorted(set(NOTEBOOKS) - set(listed))}, extra {sorted(set(listed) - set(NOTEBOOKS))}"
    assert [s for s, _ in entries if s] == REQUIRED_SECTIONS
    exps = dict(entries)["Experiments"]
    assert [nb for nb in exps if nb.startswith("exp_")] == sorted(nb for nb in NOTEBOOKS if nb.startswith("exp_"))


def test_quarto_config():
    q = yaml.safe_load((NBS/"_quarto.yml").read_text())
    assert q["format"]["html"]["html-math-method"] in ("mathjax", "katex")
    assert "sidebar.yml" in q["metadata-files"] and "nbdev.yml" in q["metadata-files"]
    nav = q["website"]["navbar"]
    menu = next(i for i in nav["left"] if i.get("text") == "Experiments")["menu"]
    assert sorted(i["href"] for i in menu) == sorted(nb for nb in NOTEBOOKS if nb.startswith("exp_"))
    assert any(i.get("href") == "https://github.com/fewshot-nb/fewshot_nb" for i in nav["right"])


def test_workflows():
    deploy = yaml.safe_load((ROOT/".github/workflows/deploy.yaml").read_text())
    steps = [s for j in deploy["jobs"].values() for s in j["steps"]]
    assert any(s.get("uses", "").startswith("fastai/workflows/quarto-ghp@") for s in steps)
    test = (ROOT/".github/workflows/test.yaml").read_text()
    assert "PIP_CONSTRAINT" in test and "constraints.txt" in test


def test_build_refuses_bad_input(tmp_path):
    with pytest.raises(SystemExit, match="no notebook"): bd.build(tmp_path/"out", workers=1, only=["no_such_*"])
    with pytest.raises(SystemExit, match="not git-ignored"): bd.build(ROOT/"nbs"/"preview", workers=1, only=["index.ipynb"])


# ---------------------------------------------------------------------------------------------- the preview
@pytest.fixture(scope="session")
def preview(tmp_path_factory):
    "The whole preview, built once per session into a temporary folder."
    out = tmp_path_factory.mktemp("docs")/"site"
    pages = bd.build(out, workers=min(2, os.cpu_count() or 1))
    return out, {p["nb"]: p for p in pages}


def test_one_page_per_notebook(preview):
    "Each notebook is one page, where Quarto puts it (nbdev's output-file: the number prefix dropped)."
    from nbdev.config import nbpath2html
    out, pages = preview
    assert sorted(pages) == sorted(NOTEBOOKS)
    for nb, p in pages.items():
        assert p["page"] == nbpath2html(Path(nb)).as_posix()
        assert (out/p["page"]).is_file() and (out/(p["page"] + ".md")).is_file()
    assert pages["data/13_samplers.ipynb"]["page"] == "data/samplers.html"
    assert pages["01a_mixed.ipynb"]["page"] == "mixed.html"


def test_pages_have_title_sidebar_navbar_math(preview):
    out, pages = preview
    for nb, p in pages.items():
        text = (out/p["page"]).read_text()
        assert p["title"] and f'<h1 class="title">{html.escape(p["title"])}</h1>' in text, nb
        assert 'id="sidebar"' in text and all(f'<div class="section">{s}</div>' in text for s in ["Solvers", "Experiments"])
        assert 'class="navbar"' in text and "https://github.com/fewshot-nb/fewshot_nb" in text
        src = re.search(r'<script src="([^"]*MathJax\.js)', text).group(1)
        assert (out/p["page"]).parent.joinpath(src).resolve().is_file(), f"{nb}: MathJax not served locally ({src})"
        assert not re.search(r'<(script|link)[^>]+(src|href)="(https?:)?//', text), f"{nb} loads something from the network"


def _site_links(text):
    "Links to pages of the hosted site: (path, anchor)."
    for m in re.finditer(re.escape(SITE) + r"([\w./-]*)(#[\w.\-]*)?", text):
        yield m.group(1) or "index.html", (m.group(2) or "")[1:]


def test_readme_and_docstring_links_exist(preview):
    "Every link to the hosted site in README.md, nbs/index.ipynb and the module docstrings is a page the preview builds."
    out, _ = preview
    sources = {"README.md": (ROOT/"README.md").read_text(), "nbs/index.ipynb": (NBS/"index.ipynb").read_text()}
    sources.update({str(p.relative_to(ROOT)): (inspect.getdoc(_module(p)) or "") for p in sorted((ROOT/"fewshot_nb").rglob("*.py"))
                    if p.name != "_modidx.py"})
    n, bad = 0, []
    for where, text in sources.items():
        for path, anchor in _site_links(text):
            n += 1
            if not (out/path).is_file(): bad.append(f"{where}: {SITE}{path}")
            elif anchor and f'id="{anchor}"' not in (out/path).read_text(): bad.append(f"{where}: {SITE}{path}#{anchor}")
    assert n > 40, f"only {n} links to the site found"
    assert not bad, "links to pages that the site does not have:\n" + "\n".join(bad)


def test_readme_links_the_notebooks_in_the_repository():
    "Readers without the site get the notebooks: every module row and experiment also links its notebook on GitHub."
    readme = (ROOT/"README.md").read_text()
    for nb in NOTEBOOKS:
        if nb == "index.ipynb": continue
        assert f"https://github.com/fewshot-nb/fewshot_nb/blob/main/nbs/{nb}" in readme, f"README does not link nbs/{nb}"


def _module(path):
    import importlib
    return importlib.import_module(".".join(path.relative_to(ROOT).with_suffix("").parts))


def _in_class_methods(mod_file):
    """`Class.method` for every method defined inside a class body of a module (nbdev's show_doc cells document
    top-level definitions only: functions, classes and methods added with @patch)."""
    tree = ast.parse(Path(mod_file).read_text())
    return {f"{c.name}.{f.name}" for c in tree.body if isinstance(c, ast.ClassDef)
            for f in c.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _public_api():
    "(qualified name, short name, page, anchor, in_class) of every public function, class and method in fewshot_nb/_modidx.py."
    from fewshot_nb._modidx import d
    out = []
    for mod, syms in d["syms"].items():
        for name, (url, path) in syms.items():
            short = name[len(mod) + 1:]
            if any(part.startswith("_") for part in short.split(".")): continue
            page, _, anchor = url.partition("#")
            out.append((name, short, page, anchor, short in _in_class_methods(ROOT/path)))
    return out


def _expected_doc(qualname):
    "The signature's name and the docments comments that nbdev's show_doc renders for `qualname`."
    import importlib
    from nbdev.showdoc import show_doc
    parts = qualname.split(".")
    for i in range(len(parts), 0, -1):
        try: obj = importlib.import_module(".".join(parts[:i])); rest = parts[i:]; break
        except ImportError: continue
    for r in rest: obj = getattr(obj, r)
    md = show_doc(obj)._repr_markdown_()
    sig = re.search(r"```python\n(.*?)```", md, re.S).group(1)
    return rest[-1], [c.strip() for c in re.findall(r"#\s*(.+)$", sig, re.M)]


# ---------------------------------------------------------------------------------------------- the browser
def _browser_missing():
    missing = [b for b in ("chromium", "chromedriver") if not (shutil.which(b) or (b == "chromium" and shutil.which("chromium-browser")))]
    try: import selenium  # noqa: F401
    except ImportError: missing.append("selenium (PyPI)")
    return missing


@pytest.fixture(scope="session")
def browser():
    missing = _browser_missing()
    if missing:
        msg = f"headless browser checks need {', '.join(missing)} (Debian: apt-get install chromium chromium-driver)"
        if os.environ.get("FEWSHOT_REQUIRE_BROWSER") == "1": pytest.fail(msg + "; FEWSHOT_REQUIRE_BROWSER=1 requires them")
        pytest.skip(msg)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium") or shutil.which("chromium-browser")
    for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1280,900"]:
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=opts)
    driver.set_page_load_timeout(60); driver.set_script_timeout(60)
    yield driver
    driver.quit()


@pytest.fixture(scope="session")
def served(preview):
    "The preview over http:// on localhost (MathJax's web fonts are refused from file:// pages)."
    out, _ = preview
    handler = partial(type("Quiet", (SimpleHTTPRequestHandler,), {"log_message": lambda *a: None}), directory=str(out))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


_COLLECT = """
const anchors = arguments[0], done = arguments[arguments.length - 1];
function collect() {
  const heads = Array.from(document.querySelectorAll("main h2, main h3, main h4"));
  const section = name => {
    // show_doc's heading follows its <hr>; a section heading with the same text may come first
    const same = heads.filter(e => e.textContent.trim() === name);
    const h = same.find(e => e.previousElementSibling && e.previousElementSibling.tagName === "HR") || same[0];
    if (!h) return null;
    let text = h.textContent, n = h.nextElementSibling;
    while (n && !/^(H[1-4]|HR)$/.test(n.tagName)) { text += "\\n" + n.textContent; n = n.nextElementSibling; }
    return text;
  };
  const docs = {}; for (const a of anchors) docs[a] = section(a);
  done({ids: Array.from(document.querySelectorAll("[id]"), e => e.id),
        links: Array.from(document.querySelectorAll("a[href]"), a => a.href),
        images: Array.from(document.images, i => [i.getAttribute("src").slice(0, 60), i.complete, i.naturalWidth]),
        math: document.querySelectorAll(".MathJax, .MathJax_Display, .mjx-chtml").length,
        mathErrors: document.querySelectorAll(".MathJax_Error, merror").length, docs});
}
if (window.MathJax && MathJax.Hub) MathJax.Hub.Queue(collect); else collect();
"""


@pytest.fixture(scope="session")
def visited(browser, served, preview):
    "Every page opened once: console messages, ids, links, images and the text after each API anchor."
    out, pages = preview
    api = {}
    for name, short, page, anchor, _ in _public_api(): api.setdefault(page, []).append(short)
    res = {}
    for p in pages.values():
        browser.get(served + p["page"])
        data = browser.execute_async_script(_COLLECT, api.get(p["page"], []))
        data["console"] = [e for e in browser.get_log("browser")]
        res[p["page"]] = data
    return res


# MathJax 2's combined config declares @font-face rules for its TeX .otf fonts (used for a few alphabets such as
# \mathcal), which jupyter-server-mathjax does not ship; the browser then falls back to the STIX-Web fonts it does
# ship. Only those 404s are tolerated; any other SEVERE message fails.
_KNOWN = re.compile(r"/_static/mathjax/fonts/HTML-CSS/TeX/otf/MathJax_[\w-]+\.otf - Failed to load resource: the server responded with a status of 404")


def test_no_console_errors(visited):
    bad = {page: [e["message"] for e in d["console"] if e["level"] == "SEVERE" and not _KNOWN.search(e["message"])]
           for page, d in visited.items()}
    bad = {k: v for k, v in bad.items() if v}
    assert not bad, f"console errors: {json.dumps(bad, indent=1)[:3000]}"


def test_math_is_rendered(visited):
    "MathJax (served locally) typesets the pages' equations, without errors."
    assert visited["metrics.html"]["math"] > 5
    errs = {page: d["mathErrors"] for page, d in visited.items() if d["mathErrors"]}
    assert not errs, f"MathJax errors: {errs}"


def test_internal_links_resolve(visited, served):
    n, bad = 0, []
    for page, d in visited.items():
        for href in d["links"]:
            if not href.startswith(served): continue
            u = urlsplit(href)
            path = u.path[len(urlsplit(served).path):] or "index.html"
            if not path.endswith(".html"): continue
            n += 1
            if path not in visited: bad.append(f"{page} -> {path} (no such page)")
            elif u.fragment and u.fragment not in visited[path]["ids"]: bad.append(f"{page} -> {path}#{u.fragment} (no such anchor)")
    assert n > 47 * 40, f"only {n} internal links seen"
    assert not bad, "broken internal links:\n" + "\n".join(sorted(set(bad))[:50])


def _undocumented(visited, in_class):
    api = [a for a in _public_api() if a[4] == in_class]
    bad = []
    for name, short, page, anchor, _ in api:
        v = visited.get(page) or {}
        if anchor not in v.get("ids", []): bad.append(f"{name}: the index's anchor #{anchor} is not on {page}")
        text = v.get("docs", {}).get(short)
        if text is None: bad.append(f"{name}: no show_doc section `{short}` on {page}"); continue
        last, comments = _expected_doc(name)
        norm = " ".join(text.split())
        if not re.search(rf"\b(def|class)\s+{re.escape(last)}\s*\(", text): bad.append(f"{name}: no signature on {page}")
        missing = [c for c in comments if " ".join(c.split()) not in norm]
        if missing: bad.append(f"{name}: docments missing on {page}: {missing[:3]}")
    return api, bad


def test_public_api_documented(visited):
    """Every public function, class and @patch method appears on its module's page: a show_doc section with its
    signature and its docments, and the anchor that fewshot_nb/_modidx.py gives it."""
    api, bad = _undocumented(visited, in_class=False)
    assert len(api) > 250
    assert not bad, f"{len(bad)} problems with {len(api)} public names:\n" + "\n".join(bad[:60])


def test_public_methods_in_class_bodies_documented(visited):
    """Every public method defined in a class body appears on its module's page: nbdev documents top-level
    definitions only, so each has a show_doc cell after its class."""
    api, bad = _undocumented(visited, in_class=True)
    assert api and not bad, f"{len(bad)} problems with {len(api)} methods:\n" + "\n".join(bad[:80])


def test_images_load(visited):
    n = sum(len(d["images"]) for d in visited.values())
    bad = {page: [i for i in d["images"] if not (i[1] and i[2] > 0)] for page, d in visited.items()}
    bad = {k: v for k, v in bad.items() if v}
    assert n > 20, f"only {n} images in the whole site"
    assert not bad, f"images that did not load: {bad}"


def _png_size(path):
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


@pytest.mark.parametrize("name", SHOTS)
def test_screenshot(name, browser, served, visited):
    "Screenshots of three pages, for a person to look at; each a real, non-empty PNG of the window."
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    browser.get(served + SHOTS[name])
    browser.execute_async_script("const d = arguments[0]; (window.MathJax && MathJax.Hub) ? MathJax.Hub.Queue(d) : d()")
    browser.set_window_size(1280, 2400)   # tall enough to show a figure, equations and a show_doc block
    browser.execute_script("const e = document.querySelector('main hr, main img'); if (e) e.scrollIntoView();")
    path = SCREENSHOTS/f"{name}.png"
    path.unlink(missing_ok=True)
    try: assert browser.save_screenshot(str(path))
    finally: browser.set_window_size(1280, 900)
    w, h = _png_size(path)
    assert (w, h) >= (800, 600) and path.stat().st_size > 20_000, (w, h, path.stat().st_size)
