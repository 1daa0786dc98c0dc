"""Few-shot solvers on features (inductive and transductive), their losses and their registry: `make_solver(name)`, `list_solvers()`."""
# Written by hand: nbdev-export leaves an existing __init__.py alone. Every module of the package is imported
# here, so that importing any part of the package registers all of its components (nothing anywhere imports a
# module for its side effect), and the modules' public names are re-exported. `__all__` is the union of the
# modules' own `__all__`; tests/test_api.py checks that every module of this folder is listed here, and that no
# two modules export the same name.
from . import base as _base
from .base import *
from . import losses as _losses
from .losses import *
from . import finetune as _finetune
from .finetune import *
from . import transductive as _transductive
from .transductive import *
from . import baselines as _baselines
from .baselines import *
from . import ici as _ici
from .ici import *
from . import amortised as _amortised
from .amortised import *
from . import backbone_finetune as _backbone_finetune
from .backbone_finetune import *

__all__ = [*_base.__all__, *_losses.__all__, *_finetune.__all__, *_transductive.__all__, *_baselines.__all__,
           *_ici.__all__, *_amortised.__all__, *_backbone_finetune.__all__]
