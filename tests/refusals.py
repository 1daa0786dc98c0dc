"""Bad parameters given to an experiment notebook, each run as papermill runs it, in one kernel for all of them.

A refusal test tries several bad values on one notebook. Run by papermill, each starts a kernel and imports torch and
the package before the check that stops it (7-8 s a case). Here one kernel runs them all: for each case the notebook
papermill would execute (`papermill.parameterize.parameterize_notebook`: the parameters cell, papermill's injected
cell, then every cell in order) until its first error, which is returned as papermill reports it (`ename: evalue` and
the traceback). Each case starts again from the parameters cell, so every declared parameter is reset; what the
refusal must not leave (an output folder, a file) the tests check as before. That papermill itself turns a failing
cell into a failed run with that message is checked in tests/test_papermill.py (test_unknown_parameter_cli_exits_nonzero,
test_progress_shows_in_papermill_log_output_unless_silenced).
"""
import re
from pathlib import Path
from jupyter_client.manager import start_new_kernel
from papermill.iorw import load_notebook_node
from papermill.parameterize import parameterize_notebook

ROOT = Path(__file__).resolve().parent.parent
_ANSI = re.compile(r"\x1B(?:[@-Z\\-_]|\[[0-?]*[ -/]*[@-~])")


class RefusalKernel:
    "One python3 kernel, started in the project's root as the tests' papermill runs are; a context manager."
    def __enter__(self):
        self.km, self.kc = start_new_kernel(kernel_name="python3", cwd=str(ROOT))
        return self

    def __exit__(self, *exc):
        self.kc.stop_channels(); self.km.shutdown_kernel(now=True)

    def run(self, notebook:str|Path, parameters:dict, timeout:float=600) -> str|None:
        "The first error of `notebook` run with `parameters` (`ename: evalue`, then the traceback), or None if every cell ran."
        nb = parameterize_notebook(load_notebook_node(str(notebook)), parameters)   # read as papermill reads it
        self.cell = 0   # the code cells run, the failing one included: papermill's execution count of the error
        for cell in nb.cells:
            if cell.cell_type != "code": continue
            self.cell += 1
            errors = []
            hook = lambda msg: errors.append(msg["content"]) if msg["header"]["msg_type"] == "error" else None
            reply = self.kc.execute_interactive(cell.source, timeout=timeout, output_hook=hook)   # in `In`, where check_parameters reads what papermill injected
            if reply["content"]["status"] == "error":
                e = self.error = errors[0] if errors else reply["content"]   # (ename, evalue, traceback: as papermill's error holds them)
                return _ANSI.sub("", f"{e['ename']}: {e['evalue']}\n" + "\n".join(e.get("traceback", [])))
        return None


def assert_refused(notebook:str|Path, cases, **common):
    "Each (parameters, message) of `cases` stops `notebook` (run with `common` and the case's parameters) with an error holding the message."
    with RefusalKernel() as k:
        for params, message in cases:
            err = k.run(notebook, {**common, **params})
            assert err is not None, f"{params} was accepted by {Path(notebook).name}"
            assert message in err, err
