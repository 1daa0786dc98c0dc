"""Data: Omniglot and its splits, feature sources and feature files, episode samplers, augmentation, image streams."""
# Written by hand: nbdev-export leaves an existing __init__.py alone. Every module of the package is imported
# here, so that importing any part of the package registers all of its components (nothing anywhere imports a
# module for its side effect), and the modules' public names are re-exported. `__all__` is the union of the
# modules' own `__all__`; tests/test_api.py checks that every module of this folder is listed here, and that no
# two modules export the same name.
from . import sources as _sources
from .sources import *
from . import omniglot as _omniglot
from .omniglot import *
from . import splits as _splits
from .splits import *
from . import samplers as _samplers
from .samplers import *
from . import augment as _augment
from .augment import *
from . import streams as _streams
from .streams import *
from . import feature_files as _feature_files
from .feature_files import *
from . import datasets as _datasets
from .datasets import *

__all__ = [*_sources.__all__, *_omniglot.__all__, *_splits.__all__, *_samplers.__all__, *_augment.__all__,
           *_streams.__all__, *_feature_files.__all__, *_datasets.__all__]
