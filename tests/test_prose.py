"""No number of ours is typed in an experiment notebook's prose (STYLE.md, "Numbers in an experiment's discussion").

A result typed in Markdown goes stale at the next run: every number of ours is rendered from the run's files
(`fewshot_nb.bench.discussion.RunFiles` and `prose`). Typed prose may quote a paper's numbers, each with the
table, figure, section or equation it comes from, in the same sentence. This test reads every Markdown cell of
the experiment notebooks, and the text typed inside their `prose(...)` cells, and fails on a sentence that states
a result (a decimal number, a percentage, a '±' or a number of points) with no such reference.
"""
import ast, json, re
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
EXPERIMENTS = sorted((ROOT/"nbs").glob("exp_*.ipynb"))
# a reference to where a quoted number is printed: a table, figure, section, equation, appendix or algorithm of a
# paper, or the README or demo of a public repository
CITE = re.compile(r"(\bTables?\s*[A-Z]?\d|\bTab\.\s*\d|\bFigs?\.\s*\d|\bFigures?\s*\d|§\s*\d|\bEq\.\s*\(?\d|\bAppendix\b|"
                  r"\bApp\.\s*[A-Z\d]|\bAlg\.\s*\d|\bAlgorithm\s*\d|\bSec\.\s*\d|\bSection\s*\d|\bREADME\b|\bdemo\b)")
RESULT = re.compile(r"(?<![\w.\-])(?:[+−-]?\d+(?:\.\d+)?\s?%|[+−-]?\d+\.\d+(?!\.\d)|\d\s*±|±\s*\d|\d+(?:\.\d+)?\s+(?:percentage\s+)?points?\b|\d+\s?pp\b)")


def _clean(md:str) -> str:
    "Markdown without what cannot be a typed result: code, math, link targets, HTML tags, versions."
    md = re.sub(r"```.*?```", " ", md, flags=re.S)
    md = re.sub(r"`[^`]*`", " ", md)
    md = re.sub(r"\$\$.*?\$\$|\$[^$\n]*\$", " ", md, flags=re.S)
    md = re.sub(r"\]\([^)]*\)", "]", md)
    md = re.sub(r"<[^>]+>", " ", md)
    md = re.sub(r"https?://\S+", " ", md)
    md = re.sub(r"\b\d+\.\d+\.\d+\b", " ", md)   # version numbers
    md = re.sub(r"\b(?:95|99)\s?%(?=[\s-]*(?:confidence|interval|CI|t-interval|bootstrap))", " ", md)   # a level, not a result
    md = md.replace("(%)", " ")                                          # a unit in a heading or axis label
    return md


def sentences(md:str) -> list[str]:
    "The units a reference must share with a number: sentences, list items and table rows (a table's header counts for all its rows)."
    out, table_cited = [], False
    for block in re.split(r"\n\s*\n", _clean(md)):
        lines = block.split("\n")
        if lines and lines[0].lstrip().startswith("|"):       # a table: cited once in its header or caption row
            table_cited = bool(CITE.search(lines[0]))
            out += [] if table_cited else [l for l in lines if not re.match(r"^\s*\|[\s:|-]+\|\s*$", l)]
            continue
        for item in re.split(r"\n\s*(?:[-*]|\d+\.)\s+", "\n" + block):
            out += [s for s in re.split(r"(?<=[.;:!?])\s+(?=[A-Z*(])", item.replace("\n", " ")) if s.strip()]
    return out


def offending(md:str) -> list[str]:
    "The sentences of `md` that state a result with no reference to where it is printed."
    return [s.strip() for s in sentences(md) if RESULT.search(s) and not CITE.search(s)]


def _prose_text(src:str) -> list[str]:
    """The typed text of a code cell that calls `prose(...)`: every string literal of the cell (the Markdown may be
    built in pieces, e.g. a list of f-strings joined), with the f-strings' fields left out."""
    try: tree = ast.parse("\n".join(l for l in src.split("\n") if not l.lstrip().startswith(("%", "!"))))
    except SyntaxError: return []
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", getattr(n.func, "attr", None)) in ("prose", "discuss")]
    if not calls: return []
    fstrings = [n for n in ast.walk(tree) if isinstance(n, ast.JoinedStr)]
    inside = {id(sub) for f in fstrings for sub in ast.walk(f) if sub is not f}
    texts = ["".join(v.value for v in f.values if isinstance(v, ast.Constant)) for f in fstrings if id(f) not in inside]
    texts += [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in inside]
    return [t for t in texts if t.strip()]


def typed_prose(nb_path:Path) -> list[tuple[int, str]]:
    "(cell index, text) of every typed piece of prose of a notebook."
    cells = json.loads(nb_path.read_text(encoding="utf-8"))["cells"]
    out = []
    for i, c in enumerate(cells):
        src = "".join(c["source"])
        if c["cell_type"] == "markdown": out.append((i, src))
        elif c["cell_type"] == "code": out += [(i, t) for t in _prose_text(src)]
    return out


def test_the_rule_catches_a_typed_result():
    assert offending("MHD reproduces 38.8% exactly.")
    assert offending("- Within-alphabet tasks are harder: +9.9 points for MHD.")
    assert offending("ratio 2.26 [1.98, 2.58] against the paper")
    assert offending("| ours | 62 ± 3 |\n|---|---|\n| a | 1 |")
    assert not offending("The official demo prints 38.8% for MHD.")
    assert not offending("TIM drops 4.5 points under Dir(2) (Table 2).")
    assert not offending("We train 8 epochs of 20-way 1-shot episodes at 28 px, `lr=1e-3`, $\\alpha = 0.5$.")
    assert not offending("Mean error with a 95% confidence interval (%), from 95% t-intervals.")
    assert not offending("| method | paper (Table 3) |\n|---|---|\n| SNAIL | 56.3 |")
    assert offending("Ours is 62%. The paper finds 91% (Fig. 3a).")      # the reference covers its own sentence only
    assert _prose_text('prose(f"ours: {R.ci(\'x\')} and 74% too")') == ["ours:  and 74% too"]
    # Markdown built in pieces is read too: every literal of a cell that calls prose
    assert offending(" ".join(_prose_text('lines = [f"MHD: {x}", "pixel NN: 81%."]\nprose("\\n".join(lines))')))
    assert _prose_text('x = "81%"') == []                                  # a cell that shows no prose


@pytest.mark.parametrize("nb", EXPERIMENTS, ids=[p.stem for p in EXPERIMENTS])
def test_no_typed_results(nb):
    bad = [(i, s) for i, text in typed_prose(nb) for s in offending(text)]
    assert not bad, (f"{nb.name}: {len(bad)} sentences state a result of ours as typed text, or quote a paper without "
                     "its table or figure (render ours from the run's files with RunFiles/prose):\n"
                     + "\n".join(f"  cell {i}: {s[:160]}" for i, s in bad))


def prose_not_shown(src:str) -> bool:
    """Whether a code cell calls `prose(...)` without showing it: IPython displays only the value of a cell's last
    top-level expression, so a `prose(...)` inside an `if` or a loop, or followed by other statements, shows nothing."""
    try: tree = ast.parse("\n".join(l for l in src.split("\n") if not l.lstrip().startswith(("%", "!"))))
    except SyntaxError: return False
    is_prose = lambda n: isinstance(n, ast.Call) and getattr(n.func, "id", getattr(n.func, "attr", None)) in ("prose", "discuss")
    if not any(is_prose(n) for n in ast.walk(tree)): return False
    last = tree.body[-1] if tree.body else None
    shown = isinstance(last, ast.Expr) and (is_prose(last.value) or (isinstance(last.value, ast.Call) and getattr(last.value.func, "id", None) == "display"))
    wrapped = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "display" and any(is_prose(a) for a in n.args)]
    return not shown and not wrapped


def test_the_shown_rule():
    assert prose_not_shown('if ok:\n    prose("x")')                      # inside an `if`: nothing is displayed
    assert prose_not_shown('prose("x")\ny = 1')                           # not the last statement
    assert not prose_not_shown('text = ""\nif ok:\n    text = "x"\nprose(text)')
    assert not prose_not_shown('if ok:\n    display(prose("x"))')
    assert not prose_not_shown('x = 1')


def test_stored_discussions_match_their_runs(tmp_path, capsys):
    """The stored output of every discussion cell that reads files only is what the stored default run gives now
    (`tools/render_prose.py --check`): a wording changed without re-rendering, or a run file replaced, fails here."""
    from tools_loader import load_tool
    import pandas as pd
    rp = load_tool("render_prose")
    with pd.option_context("display.width", 160, "display.max_colwidth", 60):   # as an earlier notebook of this worker left them
        assert rp.main([str(p) for p in EXPERIMENTS] + ["--check"]) == 0, capsys.readouterr().out
        assert pd.get_option("display.width") == 160   # and the caller's options are given back
    # and it can fail: a copy of exp_generation whose discussion output was edited is stale
    nb = json.loads((ROOT/"nbs"/"exp_generation.ipynb").read_text(encoding="utf-8"))
    k = next(i for i, c in enumerate(nb["cells"]) if any("text/markdown" in o.get("data", {}) for o in c.get("outputs", [])))
    nb["cells"][k]["outputs"][0]["data"]["text/markdown"] = ["An edited discussion.\n"]
    copy = tmp_path/"exp_generation.ipynb"
    copy.write_text(json.dumps(nb), encoding="utf-8")
    assert rp.main([str(copy), "--check"]) == 1


def test_findings_are_compared_as_numbers(tmp_path):
    """A re-derived findings.csv may differ from the stored one in the last bits (the BLAS and CPU decide them: a mixed
    model fitted on AVX2 and on AVX-512 differ in the 13th digit), never in the sixth significant digit or in its text."""
    from tools_loader import load_tool
    import pandas as pd
    rp = load_tool("render_prose")
    stored = ROOT/"nbs"/"runs"/"exp_reproducibility"/"findings.csv"
    df = pd.read_csv(stored, keep_default_na=False, dtype=str)
    col = next(c for c in ("low", "high", "ours") if any(_float(v) for v in df[c]))
    i = next(k for k, v in enumerate(df[col]) if _float(v))
    def variant(value=None, text=None):
        d = df.copy()
        if value is not None: d.loc[i, col] = repr(value)
        if text is not None: d.loc[i, "verdict"] = text
        p = tmp_path/f"f{len(list(tmp_path.iterdir()))}.csv"; d.to_csv(p, index=False); return p
    x = float(df.loc[i, col])
    assert rp.findings_differences(stored, variant(x * (1 + 1e-12))) == []       # the last bits: the same findings
    assert rp.findings_differences(stored, variant(x * (1 + 1e-4)))               # the fifth digit: another finding
    assert rp.findings_differences(stored, variant(text="reproduced"))            # a verdict's word
    assert rp.findings_differences(stored, variant(x, text=df.loc[i, "verdict"])) == []


def _float(v:str) -> bool:
    "Whether a cell holds a nonzero number."
    try: return float(v) != 0
    except ValueError: return False


def builds_sentences(src:str) -> list[str]:
    """What makes a discussion cell code instead of a template: a call to `prose(...)` (Markdown built by code), an
    f-string, or a `discuss(...)` whose template is not one plain string literal."""
    try: tree = ast.parse("\n".join(l for l in src.split("\n") if not l.lstrip().startswith(("%", "!"))))
    except SyntaxError: return []
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", None) in ("prose", "discuss")]
    if not calls: return []
    out = [f"calls {getattr(c.func, 'id')}(...) with a template built by code" for c in calls
           if getattr(c.func, "id") == "prose" or not (c.args and isinstance(c.args[0], ast.Constant) and isinstance(c.args[0].value, str))]
    if any(isinstance(n, ast.JoinedStr) for n in ast.walk(tree)): out.append("builds text with an f-string")
    if any(isinstance(n, (ast.If, ast.For, ast.While, ast.IfExp, ast.Lambda, ast.ListComp, ast.GeneratorExp)) for n in ast.walk(tree)):
        out.append("branches, loops or defines functions")
    return out


def test_the_template_rule():
    assert builds_sentences('prose(f"ours: {x}")')
    assert builds_sentences('lines = []\nif ok: lines.append("a")\ndiscuss("\\n".join(lines), out_dir)')
    assert builds_sentences('discuss(f"{x}", out_dir)')
    assert not builds_sentences('#| echo: false\ndiscuss("""PT-MAP drops {finding: pt-map}.""", out_dir, seed1="nbs/results/x")')
    assert not builds_sentences('x = 1')


@pytest.mark.parametrize("nb", EXPERIMENTS, ids=[p.stem for p in EXPERIMENTS])
def test_discussions_are_shown_templates(nb):
    """Every discussion of an experiment notebook is one `discuss` template (issue 45): no code builds its sentences,
    and the cell shows it (a template inside an `if`, or followed by other statements, leaves the page without it)."""
    cells = [(i, "".join(c["source"])) for i, c in enumerate(json.loads(nb.read_text(encoding="utf-8"))["cells"]) if c["cell_type"] == "code"]
    bad = [(i, why) for i, src in cells for why in builds_sentences(src)] + [(i, "not shown") for i, src in cells if prose_not_shown(src)]
    assert not bad, f"{nb.name}: discussion cells built by code or not shown: {bad}"
    assert any("discuss(" in src for _, src in cells), f"{nb.name} has no discussion"
