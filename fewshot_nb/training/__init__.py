"""Backbones (`make_backbone(name)`, `list_backbones()`) and how to train them: the trainer, MAML, SimCLR, pre-training, siamese nets."""
# Written by hand: nbdev-export leaves an existing __init__.py alone. Every module of the package is imported
# here, so that importing any part of the package registers all of its components (nothing anywhere imports a
# module for its side effect), and the modules' public names are re-exported. `__all__` is the union of the
# modules' own `__all__`; tests/test_api.py checks that every module of this folder is listed here, and that no
# two modules export the same name.
from . import backbones as _backbones
from .backbones import *
from . import trainer as _trainer
from .trainer import *
from . import maml as _maml
from .maml import *
from . import simclr as _simclr
from .simclr import *
from . import pretrain as _pretrain
from .pretrain import *
from . import siamese as _siamese
from .siamese import *

__all__ = [*_backbones.__all__, *_trainer.__all__, *_maml.__all__, *_simclr.__all__, *_pretrain.__all__,
           *_siamese.__all__]
