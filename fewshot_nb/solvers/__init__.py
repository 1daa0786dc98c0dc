"""Few-shot solvers on features (inductive and transductive), their losses and their registry: `make_solver(name)`, `list_solvers()`."""
# Written by hand: nbdev-export leaves an existing __init__.py alone. This is the subpackage's face: the names a user
# starts from (the README, the index and the experiments use them), at most about two dozen; everything else stays
# importable from its module (`from fewshot_nb.solvers.<module> import ...`). Every module is imported, so that importing
# any part of the package registers all of its components (tests/test_api.py checks the face and its `__all__`).
from . import base, losses, finetune, transductive, baselines, ici, amortised, backbone_finetune
from .base import SOLVERS, Solver, make_solver, list_solvers, evaluate_solver, solve_batch, ProtoNet, SimpleShot
from .losses import tim_loss
from .finetune import Baseline, BaselinePP, EntropyMin, TIM, AlphaTIM
from .transductive import PTMAP, LaplacianShot, BDCSPN
from .ici import LRICI
from .amortised import Versa, SIB
from .backbone_finetune import EntropyMinFinetune

__all__ = ['SOLVERS', 'Solver', 'make_solver', 'list_solvers', 'evaluate_solver', 'solve_batch', 'ProtoNet', 'SimpleShot',
           'tim_loss', 'Baseline', 'BaselinePP', 'EntropyMin', 'TIM', 'AlphaTIM', 'PTMAP', 'LaplacianShot', 'BDCSPN', 'LRICI',
           'Versa', 'SIB', 'EntropyMinFinetune']   # the test helpers (synthetic_features, random_tasks, check_solver): fewshot_nb.testing
