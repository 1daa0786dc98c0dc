"""Data: Omniglot and its splits, standard data sets, feature files, the seeded episode sampler and the batch streams."""
# Written by hand: nbdev-export leaves an existing __init__.py alone. This is the subpackage's face: the names a user
# starts from (the README, the index and the experiments use them), at most about two dozen; everything else stays
# importable from its module (`from fewshot_nb.data.<module> import ...`). Every module is imported, so that importing
# any part of the package registers all of its components (tests/test_api.py checks the face and its `__all__`).
from . import omniglot, splits, sources, feature_files, samplers, augment, streams, datasets
from .omniglot import load_omniglot, OmniglotImages, fetch
from .splits import weak_split, lake_split, vinyals_split, koch_split
from .sources import FeatureSource, ImageFolderSource
from .feature_files import read_features, write_features
from .samplers import EpisodeSampler, EpisodeBatch, TaskManifest, dirichlet_counts, lake_runs
from .augment import Distorted
from .streams import ImageSource, ClassStream, EpisodeStream
from .datasets import make_dataset, list_datasets, verify_dataset

__all__ = ['load_omniglot', 'OmniglotImages', 'fetch', 'weak_split', 'lake_split', 'vinyals_split', 'koch_split',
           'FeatureSource', 'ImageFolderSource', 'read_features', 'write_features', 'EpisodeSampler', 'EpisodeBatch',
           'TaskManifest', 'dirichlet_counts', 'lake_runs', 'Distorted', 'ImageSource', 'ClassStream', 'EpisodeStream',
           'make_dataset', 'list_datasets', 'verify_dataset']
