"""README.md is what tools/make_readme.py makes from nbs/index.ipynb, and its commands are the real ones."""
import importlib.util
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT/"README.md"

INSTALL = 'PIP_CONSTRAINT=constraints.txt pip install -e ".[dev]"'
TEST = "FEWSHOT_DATA=../shared/data pytest -n 2"
MAIN_JOB = "papermill nbs/exp_beta.ipynb runs/exp_beta.ipynb"
# a pip user's steps, as tests/test_packaging.py runs them
PIP_USER = ['pip install "fewshot_nb[exp]"', "fewshot-nb experiments copy experiments",
            "mkdir -p runs && papermill experiments/exp_lake_runs.ipynb runs/exp_lake_runs.ipynb"]


@pytest.fixture(scope="module")
def make_readme():
    from tools_loader import load_tool
    return load_tool("make_readme")


@pytest.fixture(scope="module")
def rendered(make_readme): return make_readme.render_readme(ROOT)


def test_readme_is_up_to_date(rendered):
    assert README.read_text(encoding="utf-8") == rendered, \
        "README.md differs from nbs/index.ipynb: run `python tools/make_readme.py` (see the diff with --check)"


def test_readme_is_deterministic(make_readme, rendered):
    assert make_readme.render_readme(ROOT) == rendered


@pytest.mark.parametrize("cmd", [INSTALL, TEST, MAIN_JOB, *PIP_USER], ids=["install", "test", "main_job", "pip_install", "pip_copy", "pip_run"])
def test_readme_commands(cmd):
    "The commands users copy are in the README literally, each on a line of its own."
    assert cmd in README.read_text(encoding="utf-8").splitlines()


def test_readme_commands_match_the_project():
    "What the commands name exists: the constraints file, the dev extra, pytest-xdist, the tests folder."
    try: import tomllib
    except ModuleNotFoundError: tomllib = pytest.importorskip("tomli")  # Python 3.10
    pp = tomllib.loads((ROOT/"pyproject.toml").read_text())
    dev = " ".join(pp["project"]["optional-dependencies"]["dev"])
    assert "pytest-xdist" in dev and "papermill" in dev
    assert (ROOT/"constraints.txt").is_file()
    assert pp["tool"]["pytest"]["ini_options"]["testpaths"] == ["tests"]
