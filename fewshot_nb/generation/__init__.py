"""One-shot generative models (VAE-NS, VAE-STN, DA-GAN), their critics, and the diversity and recognizability metrics."""
# Written by hand: nbdev-export leaves an existing __init__.py alone. Every module of the package is imported
# here, so that importing any part of the package registers all of its components (nothing anywhere imports a
# module for its side effect), and the modules' public names are re-exported. `__all__` is the union of the
# modules' own `__all__`; tests/test_api.py checks that every module of this folder is listed here, and that no
# two modules export the same name.
from . import critics as _critics
from .critics import *
from . import metrics as _metrics
from .metrics import *
from . import base as _base
from .base import *
from . import vae_ns as _vae_ns
from .vae_ns import *
from . import vae_stn as _vae_stn
from .vae_stn import *
from . import dagan as _dagan
from .dagan import *

__all__ = [*_critics.__all__, *_metrics.__all__, *_base.__all__, *_vae_ns.__all__, *_vae_stn.__all__, *_dagan.__all__]
