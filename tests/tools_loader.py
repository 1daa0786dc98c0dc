"""The project's scripts in `tools/` as modules, for the tests that call their functions: one loader, not one per test file."""
import importlib.util, sys
from pathlib import Path

TOOLS = Path(__file__).resolve().parents[1]/"tools"


def load_tool(name:str, as_name:str|None=None):
    """`tools/<name>.py` as a module, registered in `sys.modules` under `as_name` (default: `name`) before it runs, so
    that its dataclasses can look their module up; loaded once per process."""
    key = as_name or name
    if key in sys.modules: return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, TOOLS/f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[key] = mod
    try: spec.loader.exec_module(mod)
    except BaseException: sys.modules.pop(key, None); raise
    return mod
