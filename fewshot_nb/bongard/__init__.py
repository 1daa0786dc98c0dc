"""Bongard-LOGO: LOGO programs and their rendering, the three problem families and problem sets, the paper's baselines."""
# Written by hand: nbdev-export leaves an existing __init__.py alone. This is the subpackage's face: the names a user
# starts from (the README, the index and the experiments use them), at most about two dozen; everything else stays
# importable from its module (`from fewshot_nb.bongard.<module> import ...`). Every module is imported, so that importing
# any part of the package registers all of its components (tests/test_api.py checks the face and its `__all__`).
from . import logo, problems, baselines
from .logo import Action, parse_program, load_shapes, render
from .problems import PROBLEM_FAMILIES, make_problem_family, list_problem_families, Problem, ProblemSet, make_problem_set, render_problems, show_problem, write_problem_set, load_bongard, BongardImages
from .baselines import BONGARD_METHODS, ResNet15, make_bongard_method, train_bongard, train_bongard_many, bongard_accuracy, untrained_bongard

__all__ = ['Action', 'parse_program', 'load_shapes', 'render', 'PROBLEM_FAMILIES', 'make_problem_family',
           'list_problem_families', 'Problem', 'ProblemSet', 'make_problem_set', 'render_problems', 'show_problem',
           'write_problem_set', 'load_bongard', 'BongardImages', 'BONGARD_METHODS', 'ResNet15', 'make_bongard_method',
           'train_bongard', 'train_bongard_many', 'bongard_accuracy', 'untrained_bongard']
