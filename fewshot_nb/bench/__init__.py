"""Benches: experiment records and findings, the classification and generation benches, evaluation from feature files."""
# Written by hand: nbdev-export leaves an existing __init__.py alone. Every module of the package is imported
# here, so that importing any part of the package registers all of its components (nothing anywhere imports a
# module for its side effect), and the modules' public names are re-exported. `__all__` is the union of the
# modules' own `__all__`; tests/test_api.py checks that every module of this folder is listed here, and that no
# two modules export the same name.
from . import experiment as _experiment
from .experiment import *
from . import findings as _findings
from .findings import *
from . import discussion as _discussion
from .discussion import *
from . import classification as _classification
from .classification import *
from . import generation as _generation
from .generation import *
from . import evaluate as _evaluate
from .evaluate import *
from . import report as _report
from .report import *
from . import reproduce as _reproduce
from .reproduce import *

__all__ = [*_experiment.__all__, *_findings.__all__, *_discussion.__all__, *_classification.__all__, *_generation.__all__, *_evaluate.__all__, *_report.__all__, *_reproduce.__all__]
