"""Bongard-LOGO: LOGO programs and their rendering, the three problem families (`make_problem_family(name)`), baselines."""
# Written by hand: nbdev-export leaves an existing __init__.py alone. Every module of the package is imported
# here, so that importing any part of the package registers all of its components (nothing anywhere imports a
# module for its side effect), and the modules' public names are re-exported. `__all__` is the union of the
# modules' own `__all__`; tests/test_api.py checks that every module of this folder is listed here, and that no
# two modules export the same name.
from . import logo as _logo
from .logo import *
from . import problems as _problems
from .problems import *
from . import baselines as _baselines
from .baselines import *

__all__ = [*_logo.__all__, *_problems.__all__, *_baselines.__all__]
