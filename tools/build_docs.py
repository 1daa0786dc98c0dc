#!/usr/bin/env python
"""Build an offline HTML preview of the docs site, without Quarto.

`nbdev-docs` renders the site with Quarto, which cannot be installed on the project's build machines. This
script takes the same route up to Quarto and replaces Quarto with nbconvert, so that CI can build and check
the same pages (tests/test_docs.py opens every page in headless Chromium):

1. Every notebook in `nbs/` goes through nbdev's docs processors (`nbdev.processors.FilterDefaults`, what
   `nbdev.serve.proc_nbs` applies before Quarto): the title cell becomes frontmatter with the page's output
   name, hidden and exported cells go, and a `show_doc` cell (signature with its docments, docstring) is
   added after every exported definition and executed. nbdev executes the exported cells, the `show_doc`
   cells and every cell that contains an import, so a lesson cell must not mix imports with code that needs
   the cells before it (keep imports in cells of their own): such a cell fails here as it fails under
   `nbdev-docs`. One addition: after an exported cell runs, its classes are rebound to the exported module's
   (`--nbdev-exec` leaves nbdev's processor unchanged), so that show_doc finds their source and renders
   their docments (a class defined in the shell has no source file on Python < 3.13, and nbdev then shows a
   dataclass's fields without their comments).
2. nbconvert's HTML exporter renders each page (stored outputs as they are, figures embedded as data URIs;
   Quarto cell options `echo`, `output`, `include` applied), at the path Quarto gives it (`output-file` of
   the frontmatter: nbs/data/13_samplers.ipynb -> data/samplers.html), next to its Markdown (`.html.md`,
   as the site's `keep-md` pages).
3. Each page gets the site's navbar (from nbs/_quarto.yml), the sidebar in the sections of nbs/sidebar.yml,
   the page title and subtitle, and MathJax served from local files (copied from the PyPI package
   `jupyter-server-mathjax`; no network).

Nothing is written outside the output folder (default `_docs_preview/`, git-ignored). Serve it with
`python -m http.server -d _docs_preview` (MathJax's web fonts need http://, not file://).

Usage, from anywhere:

    python tools/build_docs.py                       # all pages into _docs_preview/
    python tools/build_docs.py --out DIR --workers 2
    python tools/build_docs.py --only 'data/*'       # only the notebooks matching a glob (relative to nbs/)
"""
from __future__ import annotations
import argparse, ast, base64, fnmatch, html, json, os, re, shutil, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT/"_docs_preview"
MATHJAX_CONFIG = "TeX-AMS-MML_HTMLorMML-full"


# ---------------------------------------------------------------------------------------------- notebooks
def notebooks(nbs: Path) -> list[Path]:
    "The notebooks that make pages, as nbdev finds them (no folder starting with `_` or `.`), less the outputs of runs made inside `nbs/` (`runs/`, git-ignored)."
    return sorted(p for p in nbs.rglob("*.ipynb")
                  if not any(part.startswith(("_", ".")) for part in p.relative_to(nbs).parts)
                  and "runs" not in p.relative_to(nbs).parts[:-1])


def _procs(nbdev_exec: bool):
    "nbdev's docs processors; unless `nbdev_exec`, exported classes rebound to their module's (see the module docstring)."
    from nbdev.processors import FilterDefaults, exec_show_docs, _do_eval
    from nbdev.config import get_config
    from fastcore.xtras import str2bool

    class exec_docs_only(exec_show_docs):
        "`exec_show_docs`, with the classes of exported cells rebound to the exported module's"
        def __call__(self, cell):
            if not self.nb.has_docs_ or not hasattr(self, "k"): return
            fm = getattr(self.nb, "frontmatter_", {})
            if str2bool(fm.get("skip_showdoc", False)) or not _do_eval(cell): return
            self.k.cell(cell)                        # the cells nbdev-docs runs, as it runs them
            self._bind_classes(cell, cell.parsed_())
            if (e := self.k.exc):
                raise RuntimeError(f"{fm.get('title', '')}: cell {cell.idx_} failed: {type(e).__name__}: {e}\n"
                                   f"{cell.source}") from e

        def _bind_classes(self, cell, trees):
            """Classes of an exported cell, taken from the exported module: defined in the shell they have no
            source file, and show_doc (fastcore's docments, Python < 3.13) then renders a dataclass's fields and
            other class signatures without their comments."""
            d = cell.directives_
            if self.k.exc or not (d.keys() & {"export", "exports"}): return
            def arg(v): return (v.split() or [None])[0] if isinstance(v, str) else (list(v) or [None])[0]
            mod = arg(d.get("export") or d.get("exports") or "") or next(
                (arg(c.directives_["default_exp"]) for c in self.nb.cells if "default_exp" in (c.directives_ or {})), None)
            names = [t.name for t in trees if isinstance(t, ast.ClassDef)]
            if not mod or not names: return
            full = f"{get_config().lib_name}.{mod}"
            self.k.run_cell(f"import importlib as _bd_il\n_bd_m = _bd_il.import_module({full!r})\n"
                            + "".join(f"{n} = getattr(_bd_m, {n!r}, {n})\n" for n in names))

    class Procs(FilterDefaults):
        def base_procs(self):
            ps = super().base_procs()
            return ps if nbdev_exec else [exec_docs_only if p is exec_show_docs else p for p in ps]
    return Procs()


sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_readme import _apply_quarto_options as _cell_options   # the README and the pages apply Quarto's cell options alike


def _to_nbformat(nb):
    "A plain nbformat notebook of the processed cells, with Quarto's cell options applied."
    import nbformat
    cells = []
    for c in nb.cells:
        src = c.source if isinstance(c.source, str) else "".join(c.source)
        if c.cell_type == "raw": continue                   # the frontmatter, and cells meant for Quarto only
        if c.cell_type == "markdown":
            src = "\n".join(l for l in src.split("\n") if not re.match(r"^\s*:::", l))   # Quarto's fenced divs
            if src.strip() and not src.strip().startswith("<!-- WARNING"):
                cells.append(nbformat.v4.new_markdown_cell(src))
            continue
        src, opts = _cell_options(src)
        if opts.get("include") == "false": continue
        outputs = [] if opts.get("output") == "false" else json.loads(json.dumps(c.get("outputs", [])))
        for o in outputs:   # outputs of cells executed while processing hold lists of lines
            if isinstance(o.get("text"), list): o["text"] = "".join(o["text"])
            for k, v in (o.get("data") or {}).items():
                if isinstance(v, list) and not k.endswith("json"): o["data"][k] = "".join(v)
        if opts.get("echo") == "false" and not outputs: continue
        if opts.get("echo") != "false" and not src.strip() and not outputs: continue
        cell = nbformat.v4.new_code_cell("" if opts.get("echo") == "false" else src)
        if opts.get("echo") == "false": cell.metadata["tags"] = ["remove_input"]
        cell.outputs = [nbformat.from_dict(o) for o in outputs]
        cells.append(cell)
    out = nbformat.v4.new_notebook(cells=cells)
    out.metadata["language_info"] = {"name": "python", "pygments_lexer": "ipython3"}
    return out


def quarto_id(text: str) -> str:
    "The id Quarto gives a heading: lower case, spaces to dashes, only letters, digits, `_`, `-`, `.` kept."
    text = html.unescape(re.sub(r"<[^>]+>", "", text)).strip().lower()
    return re.sub(r"[^\w\-. ]", "", text).replace(" ", "-")


def _fix_html(body: str, nb_dir: Path) -> str:
    "Quarto's heading ids (made unique as pandoc does), links to notebooks pointed at their pages, figures embedded."
    from nbdev.config import nbpath2html

    seen = {}

    def heading(m):
        tag, attrs, inner = m.group(1), m.group(2), m.group(3)
        inner = re.sub(r'<a class="anchor-link"[^>]*>.*?</a>', "", inner, flags=re.S)
        attrs = re.sub(r'\s*id="[^"]*"', "", attrs)
        hid = quarto_id(inner) or "section"
        n = seen.get(hid, 0); seen[hid] = n + 1
        return f'<{tag}{attrs} id="{hid if n == 0 else f"{hid}-{n}"}">{inner}</{tag}>'
    body = re.sub(r"<(h[1-6])([^>]*)>(.*?)</\1>", heading, body, flags=re.S)

    def link(m):
        url = m.group(1)
        if re.match(r"^[a-z]+:", url) or ".ipynb" not in url: return m.group(0)
        path, _, frag = url.partition("#")
        if not path.endswith(".ipynb"): return m.group(0)
        return f'href="{nbpath2html(Path(path)).as_posix()}{"#" + frag if frag else ""}"'
    body = re.sub(r'href="([^"]+)"', link, body)

    def img(m):
        src = html.unescape(m.group(2))
        if re.match(r"^([a-z]+:|/)", src): return m.group(0)
        f = (nb_dir/src).resolve()
        if not f.is_file(): raise FileNotFoundError(f"{nb_dir.name}: image {src} not found ({f})")
        mime = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".svg": "image/svg+xml"}
        data = base64.b64encode(f.read_bytes()).decode()
        return f'{m.group(1)}"data:{mime.get(f.suffix.lower(), "application/octet-stream")};base64,{data}"'
    return re.sub(r'(<img[^>]*?\ssrc=)"([^"]+)"', img, body)


def process_notebook(args) -> dict:
    "One notebook in its docs form, rendered: page path, title, subtitle, HTML body and Markdown."
    nb_path, root, nbdev_exec = args
    os.chdir(root)                     # nbdev's processors read the project's config from the working directory
    os.environ["IN_TEST"] = "1"        # as nbdev.serve_drv: no modidx rebuilds while processing
    from fastcore.nbio import read_nb
    from nbconvert import HTMLExporter, MarkdownExporter
    from nbdev.config import get_config
    import warnings
    warnings.filterwarnings("ignore", message="Found cells containing imports")   # nbdev's; see the module docstring
    t0 = time.time()
    nbs = get_config().nbs_path
    nb = read_nb(nb_path)
    main_mod = sys.modules["__main__"]   # IPython's shell (run by the processors) replaces __main__; put it back
    try: _procs(nbdev_exec)(nb)
    except Exception as e: raise RuntimeError(f"{nb_path.relative_to(root)}: nbdev's docs processors failed: {e}") from e
    finally: sys.modules["__main__"] = main_mod
    fm = dict(getattr(nb, "frontmatter_", {}) or {})
    rel_dir = nb_path.parent.relative_to(nbs)
    page = (rel_dir/fm.get("output-file", nb_path.stem + ".html")).as_posix()
    nbc = _to_nbformat(nb)
    resources = {"metadata": {"path": str(nb_path.parent)}}
    from traitlets.config import Config
    c = Config()
    c.TagRemovePreprocessor.enabled = True
    c.TagRemovePreprocessor.remove_input_tags = {"remove_input"}
    exporter = HTMLExporter(config=c, template_name="basic", embed_images=True, exclude_input_prompt=True,
                            exclude_output_prompt=True, anchor_link_text="")
    body, _ = exporter.from_notebook_node(nbc, resources=dict(resources))
    md, _ = MarkdownExporter().from_notebook_node(nbc, resources=dict(resources))
    head = f"# {fm.get('title', nb_path.stem)}\n\n" + (f"> {fm['description']}\n\n" if fm.get("description") else "")
    return dict(nb=nb_path.relative_to(nbs).as_posix(), page=page, title=str(fm.get("title", nb_path.stem)),
                description=str(fm.get("description", "") or ""), body=_fix_html(body, nb_path.parent),
                md=head + md, seconds=time.time() - t0)


# ---------------------------------------------------------------------------------------------- site
def load_site(nbs: Path) -> tuple[dict, list]:
    "The `website` part of nbs/_quarto.yml and the sidebar contents of nbs/sidebar.yml."
    import yaml
    for f in ("_quarto.yml", "sidebar.yml"):
        if not (nbs/f).is_file(): raise SystemExit(f"error: {nbs/f} is missing; the docs site needs it")
    quarto = yaml.safe_load((nbs/"_quarto.yml").read_text())
    side = yaml.safe_load((nbs/"sidebar.yml").read_text())
    try: contents = side["website"]["sidebar"]["contents"]
    except (KeyError, TypeError): raise SystemExit(f"error: {nbs/'sidebar.yml'} has no website.sidebar.contents")
    return quarto.get("website", {}) or {}, contents


def sidebar_entries(contents) -> list[tuple[str | None, list[str]]]:
    "The sidebar as (section title or None, [notebook paths]) pairs, in order."
    out = []
    for item in contents:
        if isinstance(item, str): out.append((None, [item]))
        elif isinstance(item, dict) and "section" in item:
            out.append((item["section"], [c if isinstance(c, str) else c.get("href") for c in item.get("contents", [])]))
        elif isinstance(item, dict) and "href" in item: out.append((None, [item["href"]]))
        else: raise SystemExit(f"error: sidebar.yml: entry not understood: {item!r}")
    return out


CSS = """
:root { --primary: #2780e3; --side: 17rem; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #212529; }
a { color: var(--primary); text-decoration: none; } a:hover { text-decoration: underline; }
.navbar { position: sticky; top: 0; z-index: 10; display: flex; align-items: center; gap: 1.5rem;
  background: var(--primary); color: #fff; padding: .6rem 1.2rem; }
.navbar a { color: #fff; } .navbar .brand { font-weight: 600; font-size: 1.15rem; }
.navbar .spacer { flex: 1; }
.navbar details { position: relative; } .navbar summary { cursor: pointer; list-style: none; }
.navbar details ul { position: absolute; background: #fff; list-style: none; margin: .4rem 0 0; padding: .4rem 0;
  border: 1px solid #ddd; border-radius: 4px; min-width: 16rem; box-shadow: 0 4px 12px rgba(0,0,0,.15); }
.navbar details li a { display: block; color: #212529; padding: .25rem 1rem; }
.layout { display: flex; align-items: flex-start; }
.sidebar { width: var(--side); flex: none; position: sticky; top: 3rem; max-height: calc(100vh - 3rem); overflow-y: auto;
  padding: 1rem 1rem 2rem 1.2rem; font-size: .9rem; border-right: 1px solid #eee; }
.sidebar .section { font-weight: 600; margin: .9rem 0 .2rem; }
.sidebar ul { list-style: none; margin: 0; padding-left: .6rem; } .sidebar li { margin: .15rem 0; }
.sidebar a { color: #495057; } .sidebar a.active { color: var(--primary); font-weight: 600; }
main { flex: 1; min-width: 0; max-width: 60rem; padding: 1rem 2.5rem 4rem; overflow-wrap: anywhere; }
.text_cell_render table, .output_area table { display: block; overflow-x: auto; }
main pre { overflow-x: auto; max-width: 100%; }
header.title h1 { margin-bottom: .2rem; } header.title .subtitle { color: #6c757d; font-size: 1.15rem; margin-top: 0; }
pre, code { font-family: SFMono-Regular, Menlo, Consolas, monospace; font-size: .85rem; }
.highlight, .output_area pre, .output_text pre { background: #f7f7f7; border-radius: 4px; padding: .5rem .8rem; overflow-x: auto; }
.highlight pre { margin: 0; }
.input_area { margin: .8rem 0 .3rem; }
.output_area { margin: .2rem 0 .8rem; overflow-x: auto; }
.output_area img { max-width: 100%; height: auto; }
.output_markdown hr, .text_cell_render hr { border: 0; border-top: 1px solid #dee2e6; margin: 1.5rem 0 .5rem; }
table { border-collapse: collapse; margin: .8rem 0; font-size: .9rem; }
th, td { border-bottom: 1px solid #dee2e6; padding: .3rem .6rem; text-align: left; vertical-align: top; }
img { max-width: 100%; }
.prompt { display: none; }
"""

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} – {site}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="{rel}_static/site.css">
<link rel="stylesheet" href="{rel}_static/pygments.css">
<script type="text/x-mathjax-config">
MathJax.Hub.Config({{tex2jax: {{inlineMath: [['$','$'], ['\\\\(','\\\\)']], displayMath: [['$$','$$'], ['\\\\[','\\\\]']],
  processEscapes: true, processEnvironments: true}}, messageStyle: "none", menuSettings: {{zoom: "None"}},
  // the fonts jupyter-server-mathjax ships (as Jupyter configures it)
  "HTML-CSS": {{availableFonts: [], imageFont: null, preferredFont: null, webFont: "STIX-Web", linebreaks: {{automatic: true}}}},
  SVG: {{font: "STIX-Web"}}, MMLorHTML: {{prefer: "HTML"}}}});   // not Chromium's MathML: its fonts are not shipped
</script>
<script src="{rel}_static/mathjax/MathJax.js?config={mathjax}"></script>
</head>
<body>
{navbar}
<div class="layout">
{sidebar}
<main>
<header class="title"><h1 class="title">{title_h}</h1>{subtitle}</header>
{body}
</main>
</div>
</body>
</html>
"""


def _navbar(website: dict, pages_by_nb: dict, rel: str) -> str:
    "The navbar of _quarto.yml's website.navbar: the site title, `left` and `right` items, menus as dropdowns."
    nav = website.get("navbar", {}) or {}

    def href(item):
        h = item.get("href", "") if isinstance(item, dict) else item
        if h in pages_by_nb: return rel + pages_by_nb[h]["page"], pages_by_nb[h]["title"]
        if re.match(r"^[a-z]+:", h): return h, h
        raise SystemExit(f"error: _quarto.yml navbar links to {h!r}, which is neither a notebook nor a URL")

    def item_html(item):
        if isinstance(item, dict) and "menu" in item:
            lis = "".join(f'<li><a href="{u}">{html.escape(str(t))}</a></li>'
                          for sub in item["menu"] for u, dflt in [href(sub)]
                          for t in [sub.get("text", dflt) if isinstance(sub, dict) else dflt])
            return f'<details><summary>{html.escape(item.get("text", "Menu"))} ▾</summary><ul>{lis}</ul></details>'
        u, dflt = href(item)
        text = item.get("text") or (item.get("aria-label") if item.get("icon") else None) or dflt
        return f'<a href="{u}">{html.escape(str(text))}</a>'
    left = "".join(item_html(i) for i in nav.get("left", []) or [])
    right = "".join(item_html(i) for i in nav.get("right", []) or [])
    return (f'<nav class="navbar"><a class="brand" href="{rel}index.html">{html.escape(website.get("title", ""))}</a>'
            f'{left}<span class="spacer"></span>{right}</nav>')


def _sidebar(entries, pages_by_nb: dict, rel: str, current: str) -> str:
    parts = ['<nav class="sidebar" id="sidebar">']
    for section, nbs in entries:
        if section: parts.append(f'<div class="section">{html.escape(section)}</div>')
        parts.append("<ul>")
        for nb in nbs:
            p = pages_by_nb[nb]
            cls = ' class="active"' if p["page"] == current else ""
            parts.append(f'<li><a{cls} href="{rel}{p["page"]}">{html.escape(p["title"])}</a></li>')
        parts.append("</ul>")
    parts.append("</nav>")
    return "\n".join(parts)


def _mathjax_dir() -> Path:
    try: import jupyter_server_mathjax
    except ImportError:
        raise SystemExit("error: the PyPI package jupyter-server-mathjax is not installed; it ships the MathJax the "
                         "preview serves locally (`PIP_CONSTRAINT=constraints.txt pip install -e \".[dev]\"`)")
    d = Path(jupyter_server_mathjax.__file__).parent/"static"
    if not (d/"MathJax.js").is_file(): raise SystemExit(f"error: no MathJax.js in {d}")
    return d


def build(out: Path = DEFAULT_OUT, workers: int = 2, only: list[str] | None = None, nbdev_exec: bool = False,
          root: Path = ROOT, quiet: bool = False) -> list[dict]:
    "Build the preview into `out`; returns the pages (dicts with nb, page, title, description, seconds)."
    from multiprocessing import get_context
    from pygments.formatters import HtmlFormatter
    root = Path(root).resolve()
    out = Path(out).resolve()
    nbs = root/"nbs"
    if not nbs.is_dir(): raise SystemExit(f"error: {nbs} not found: is {root} the project root?")
    website, contents = load_site(nbs)
    entries = sidebar_entries(contents)
    all_nbs = notebooks(nbs)
    chosen = [p for p in all_nbs if not only or any(fnmatch.fnmatch(p.relative_to(nbs).as_posix(), g) for g in only)]
    if not chosen: raise SystemExit(f"error: no notebook in {nbs} matches {only}")
    in_sidebar = [nb for _, l in entries for nb in l]
    missing = [nb for nb in in_sidebar if not (nbs/nb).is_file()]
    if missing: raise SystemExit(f"error: sidebar.yml lists notebooks that do not exist: {missing}")
    if out == root or root in out.parents and not _ignored(root, out):
        raise SystemExit(f"error: {out} is inside the repository but not git-ignored; choose another --out")
    jobs = [(p, root, nbdev_exec) for p in chosen]
    # the workers take the function from this file imported as a module, not from __main__
    if str(Path(__file__).resolve().parent) not in sys.path: sys.path.insert(0, str(Path(__file__).resolve().parent))
    import importlib
    worker = importlib.import_module("build_docs").process_notebook
    if workers > 1:
        # a ProcessPoolExecutor's workers are not daemonic, so a notebook cell the docs processors run may start processes
        # of its own (decoding workers), as it may under nbdev-docs; a multiprocessing.Pool's workers may not
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(min(workers, len(jobs)), mp_context=get_context("spawn")) as pool: done = list(pool.map(worker, jobs, chunksize=1))
    else: done = [worker(j) for j in jobs]
    pages = {d["nb"]: d for d in done}
    # titles of pages not built (with --only) still show in the sidebar and navbar: take them from the notebooks
    for nb in in_sidebar:
        if nb not in pages: pages[nb] = _page_stub(nbs/nb, nbs)
    if out.exists(): shutil.rmtree(out)
    (out/"_static").mkdir(parents=True)
    (out/"_static"/"site.css").write_text(CSS)
    (out/"_static"/"pygments.css").write_text(HtmlFormatter(style="default").get_style_defs(".highlight"))
    shutil.copytree(_mathjax_dir(), out/"_static"/"mathjax", ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    # MathJax 2 probes web-font loading with a font at url('about:blank'), which Chromium refuses with a CORS error in
    # the console; a local() font that does not exist probes the same way, silently
    cfg_js = out/"_static"/"mathjax"/"config"/f"{MATHJAX_CONFIG}.js"
    js = cfg_js.read_text(encoding="utf-8")
    if "url('about:blank')" in js: cfg_js.write_text(js.replace("url('about:blank')", "local('MathJax_Blank_None')"), encoding="utf-8")
    site = website.get("title", "")
    for d in done:
        depth = d["page"].count("/")
        rel = "../" * depth
        dest = out/d["page"]
        dest.parent.mkdir(parents=True, exist_ok=True)
        sub = f'<p class="subtitle">{html.escape(d["description"])}</p>' if d["description"] else ""
        dest.write_text(PAGE.format(title=html.escape(d["title"]), site=html.escape(site), rel=rel, mathjax=MATHJAX_CONFIG,
                                    navbar=_navbar(website, pages, rel), sidebar=_sidebar(entries, pages, rel, d["page"]),
                                    title_h=html.escape(d["title"]), subtitle=sub, body=d["body"]), encoding="utf-8")
        dest.with_name(dest.name + ".md").write_text(d["md"], encoding="utf-8")
    return done


def _page_stub(nb_path: Path, nbs: Path) -> dict:
    from nbdev.config import nbpath2html
    title = nb_path.stem
    for c in json.loads(nb_path.read_text())["cells"]:
        src = "".join(c["source"])
        if c["cell_type"] == "markdown" and (m := re.match(r"^#\s+(.+)", src)): title = m.group(1).strip(); break
    return dict(nb=nb_path.relative_to(nbs).as_posix(), page=nbpath2html(nb_path.relative_to(nbs)).as_posix(), title=title)


def _ignored(root: Path, path: Path) -> bool:
    import subprocess
    r = subprocess.run(["git", "check-ignore", "-q", str(path/"index.html")], cwd=root, capture_output=True)
    return r.returncode == 0


def main(argv=None):
    ap = argparse.ArgumentParser(description="Build an offline HTML preview of the docs site (no Quarto).")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder (default: _docs_preview/, git-ignored)")
    ap.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1), help="processes (default: 2)")
    ap.add_argument("--only", action="append", metavar="GLOB", help="only notebooks matching GLOB, relative to nbs/ (repeatable)")
    ap.add_argument("--nbdev-exec", action="store_true", help="execute cells exactly as nbdev-docs does")
    a = ap.parse_args(argv)
    if a.workers < 1: ap.error("--workers must be at least 1")
    t0 = time.time()
    done = build(a.out, a.workers, a.only, a.nbdev_exec)
    slow = ", ".join(f"{d['nb']} {d['seconds']:.1f}s" for d in sorted(done, key=lambda d: -d["seconds"])[:3])
    print(f"{len(done)} pages in {a.out} (slowest: {slow})")
    print(f"build time: {time.time() - t0:.1f} s")


if __name__ == "__main__":
    main()
